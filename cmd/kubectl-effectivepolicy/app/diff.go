package app

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/change"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/kinds"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/manifests"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/offline"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/render"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/tree"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// Exit statuses of diff, as kubectl diff's.
const (
	exitChanges = 1
	exitError   = 2
)

type diffOptions struct {
	*Options
	deletes []string
}

func newDiffCommand(o *Options) *cobra.Command {
	d := &diffOptions{Options: o}
	cmd := &cobra.Command{
		Use:   "diff -f FILE|DIR [-f ...] [--delete KIND/NAME...] | diff --offline [-f SHARED...] OLD NEW",
		Short: "What a change would do to the effective policies (exit status 1 when some would change)",
		Long: `Diff says which EffectivePolicies and ClusterEffectivePolicies a change would add,
modify or delete, and what changes in them: per target and policy kind, the
effective entries that appear (+), go away (-) or change, with old -> new per
field and the policy that sets it, and the sources whose outcome changes.

Against the cluster it sends the objects of -f (and --delete) as one
EffectivePolicyReview: nothing is applied or stored. Namespaced objects without
a namespace get the namespace of -n, or the kubeconfig's, as kubectl apply
does. CustomResourceDefinitions are skipped with a warning (a review cannot
change a policy kind: apply new CRDs first), and so are objects of Kubernetes'
own kinds that no effective policy depends on (Deployments, ConfigMaps, RBAC,
...); the server refuses a kind it does not model, naming it. Every
authenticated user may create a review (the install binds
effectivepolicy.dev:review-changes to system:authenticated); it names only the
EffectivePolicies you may read and counts the others. The server bounds a
review's objects and bytes and how many it answers at once (429: retried).

With --offline it compares two complete sets of manifests, OLD and NEW (files or
directories; -f adds manifests both share, read first), with no cluster: an
object in both keeps OLD's creationTimestamp, one only in NEW is newer than all
of OLD, as a review stamps them.

Exit status, as kubectl diff's: 0 when no effective policy would change, 1 when
some would, 2 on an error.`,
		Example: `  kubectl effectivepolicy diff -f retry-all.yaml
  kubectl effectivepolicy diff -f policies/ -R -n baker
  kubectl effectivepolicy diff --delete retrypolicy/retry-all -n baker
  kubectl effectivepolicy diff -f route.yaml -o yaml
  kubectl effectivepolicy diff --offline main/ pr/
  kubectl effectivepolicy diff --offline -f crds/ -f topology.yaml old/policies.yaml new/policies.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			err := d.run(commandContext(cmd), args)
			var ee *ExitError
			if err != nil && !errors.As(err, &ee) {
				err = &ExitError{Code: exitError, Err: err}
			}
			return err
		},
	}
	// A bad flag is an error, not a change.
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &ExitError{Code: exitError, Err: err} })
	addHTMLFlag(cmd, d.Options)
	cmd.Flags().StringArrayVar(&d.deletes, "delete", nil, "An object the change deletes, KIND/NAME (in the namespace of -n for a namespaced kind; repeatable).")
	return cmd
}

func (d *diffOptions) run(ctx context.Context, args []string) error {
	if err := d.validateFormat(); err != nil {
		return err
	}
	var (
		rv  *v1alpha1.EffectivePolicyReview
		err error
	)
	if d.Offline.Enabled {
		rv, err = d.offline(ctx, args)
	} else {
		rv, err = d.online(ctx, args)
	}
	if err != nil {
		return err
	}
	if err := d.printReview(rv); err != nil {
		return err
	}
	if len(rv.Status.Changes) > 0 || rv.Status.HiddenChanges > 0 {
		return &ExitError{Code: exitChanges}
	}
	return nil
}

// printReview prints the review (and writes it to --html's file).
func (d *diffOptions) printReview(rv *v1alpha1.EffectivePolicyReview) error {
	roots := render.Review(rv.Status)
	const none = "No effective policy would change."
	html := roots
	if len(roots) == 0 {
		html = []*tree.Node{tree.New(tree.S(tree.Muted, none))}
	}
	if err := d.writeHTML(html, nil); err != nil {
		return err
	}
	switch {
	case d.printsObjects():
		return d.printObject(rv)
	case len(roots) > 0:
		return d.printTrees(roots...)
	}
	fmt.Fprintln(d.ErrOut, none)
	return nil
}

// online sends the manifests of -f and the objects of --delete to the
// cluster as one review.
func (d *diffOptions) online(ctx context.Context, args []string) (*v1alpha1.EffectivePolicyReview, error) {
	if len(args) > 0 {
		return nil, fmt.Errorf("diff takes the change with -f FILE|DIR|- (and --delete KIND/NAME), not %q; to compare two sets of manifests: diff --offline OLD NEW", args[0])
	}
	if len(d.Offline.Filenames) == 0 && len(d.deletes) == 0 {
		return nil, fmt.Errorf("nothing to review: give the change with -f FILE|DIR|- and/or --delete KIND/NAME")
	}
	src, err := d.newOnline(d.Options)
	if err != nil {
		return nil, err
	}
	ns, err := src.Namespace()
	if err != nil {
		return nil, err
	}
	rv := &v1alpha1.EffectivePolicyReview{}
	if len(d.Offline.Filenames) > 0 {
		if rv.Spec.Apply, err = d.applyList(src.Kinds(), ns); err != nil {
			return nil, err
		}
	}
	if rv.Spec.Delete, err = d.deleteList(src.Kinds(), ns); err != nil {
		return nil, err
	}
	if len(rv.Spec.Apply) == 0 && len(rv.Spec.Delete) == 0 {
		return nil, fmt.Errorf("nothing to review: the manifests hold nothing a review can take")
	}
	answer, err := src.Review(ctx, rv)
	if apierrors.IsForbidden(err) {
		return nil, fmt.Errorf("%w (creating a review needs create on effectivepolicyreviews, which the install grants every authenticated user with the ClusterRoleBinding effectivepolicy.dev:review-changes; ask your cluster's admin whether it was removed)", err)
	}
	return answer, err
}

// applyList reads the manifests of -f as kubectl apply would send them
// (pkg/cli/change.Apply), warning of what a review cannot take.
func (d *diffOptions) applyList(cluster kinds.Resolver, ns string) ([]runtime.RawExtension, error) {
	objs, err := manifests.Read(manifests.Options{Filenames: d.Offline.Filenames, Recursive: d.Offline.Recursive, Stdin: d.In})
	if err != nil {
		return nil, err
	}
	explicit := d.ConfigFlags.Namespace != nil && *d.ConfigFlags.Namespace != ""
	out, skipped, err := change.Apply(objs, change.ApplyOptions{Cluster: cluster, Namespace: ns, Explicit: explicit})
	if err != nil {
		return nil, err
	}
	for _, w := range skipped.Warnings() {
		fmt.Fprintf(d.ErrOut, "Warning: %s\n", w)
	}
	return out, nil
}

// deleteList resolves the objects of --delete: KIND/NAME, namespaced kinds
// in ns.
func (d *diffOptions) deleteList(r kinds.Resolver, ns string) ([]v1alpha1.ReviewObjectReference, error) {
	return change.Refs(r, ns, "--delete", d.deletes)
}

// offline compares two sets of manifests, OLD and NEW, each completed by
// the manifests of -f they share: both computed by the server's engine,
// the changes between them built by the server's own review storage, so
// that the answer has the form and the order of the cluster's.
func (d *diffOptions) offline(ctx context.Context, args []string) (*v1alpha1.EffectivePolicyReview, error) {
	if len(args) != 2 {
		return nil, fmt.Errorf("diff --offline compares two sets of manifests: give OLD and NEW (files or directories; -f adds manifests both share)")
	}
	if len(d.deletes) > 0 {
		return nil, fmt.Errorf("--delete is for a review against the cluster; offline, leave the object out of NEW")
	}
	stdin := 0
	for _, name := range append(slices.Clone(d.Offline.Filenames), args...) {
		if name == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return nil, fmt.Errorf("standard input (-) can be read once")
	}
	ns := metav1.NamespaceDefault
	if d.ConfigFlags.Namespace != nil && *d.ConfigFlags.Namespace != "" {
		ns = *d.ConfigFlags.Namespace
	}
	opts, err := d.Offline.computeOptions()
	if err != nil {
		return nil, err
	}
	read := func(names []string) ([]*unstructured.Unstructured, error) {
		if len(names) == 0 {
			return nil, nil
		}
		return manifests.Read(manifests.Options{Filenames: names, Recursive: d.Offline.Recursive, Stdin: d.In})
	}
	shared, err := read(d.Offline.Filenames)
	if err != nil {
		return nil, err
	}
	var sets [2]change.Set
	for i, name := range args {
		if sets[i].Objects, err = read([]string{name}); err != nil {
			return nil, err
		}
		sets[i].Name = name
	}
	old, proposed, err := change.Sets(shared, sets[0], sets[1], ns)
	if err != nil {
		return nil, err
	}
	before, err := offline.New(old, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", args[0], err)
	}
	after, err := offline.New(proposed, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", args[1], err)
	}
	return answerReview(ctx, outcomes(offline.Diff(before, after)), &v1alpha1.EffectivePolicyReview{})
}

// outcomes are a review's outcomes computed beforehand (review.Source).
type outcomes []compute.Outcome

func (o outcomes) Review(context.Context, compute.Proposal) ([]compute.Outcome, error) {
	return o, nil
}

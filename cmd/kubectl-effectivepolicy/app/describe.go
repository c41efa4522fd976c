package app

import (
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/render"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/tree"
)

type describeOptions struct {
	*Options
	allNamespaces bool
}

func newDescribeCommand(o *Options) *cobra.Command {
	d := &describeOptions{Options: o}
	cmd := &cobra.Command{
		Use:   "describe KIND/NAME | KIND [NAME...]",
		Short: "The effective policies of a target, who set each field, and why the others lost",
		Long: `Describe prints, for the target of that kind and name, per policy kind: the
class, each effective entry (one per distinct context, with the attachment points
it merges: via), the effective settings as a tree of fields each with the policy
that set it, and every policy that reaches the target with its outcome and why.

It reads the target's EffectivePolicy (a ClusterEffectivePolicy for a
cluster-scoped kind: Namespace, GatewayClass). With KIND alone it describes every
target of that kind that a policy reaches, in the namespace (-n) or in all (-A).`,
		Example: `  kubectl effectivepolicy describe httproute/baker -n baker
  kubectl effectivepolicy describe gateway/cupcakes -n infra
  kubectl effectivepolicy describe namespace/baker
  kubectl effectivepolicy describe httproutes -A
  kubectl effectivepolicy describe httproute/baker -n baker --offline -f manifests/`,
		RunE: func(cmd *cobra.Command, args []string) error { return d.run(cmd, args) },
	}
	addHTMLFlag(cmd, o)
	cmd.Flags().BoolVarP(&d.allNamespaces, "all-namespaces", "A", false, "With KIND alone: targets in every namespace.")
	return cmd
}

func (d *describeOptions) run(cmd *cobra.Command, args []string) error {
	oa, err := parseObjectArgs(args)
	if err != nil {
		return err
	}
	if d.allNamespaces && len(oa.names) > 0 {
		return fmt.Errorf("-A describes every target of a kind: give KIND alone")
	}
	src, err := d.source()
	if err != nil {
		return err
	}
	km := resolveKind(src.Kinds(), oa.typ)
	ns := ""
	if km.Namespaced && !d.allNamespaces {
		if ns, err = src.Namespace(); err != nil {
			return err
		}
	}
	ctx := commandContext(cmd)
	var objs []runtime.Object
	if len(oa.names) == 0 {
		list, err := src.EffectivePolicies(ctx, ns, !km.Namespaced)
		if err != nil {
			return err
		}
		objs = withTargets(listItems(list), km)
		if len(objs) == 0 {
			fmt.Fprintf(d.ErrOut, "No policy reaches any %s%s.\n", km, inNamespace(ns, km.Namespaced))
			return nil
		}
	}
	for _, name := range oa.names {
		obj, err := src.EffectivePolicy(ctx, ns, name)
		if apierrors.IsNotFound(err) || err == nil && len(withTargets([]runtime.Object{obj}, km)) == 0 {
			return fmt.Errorf("no policy reaches %s %s", km, qualified(ns, name))
		}
		if err != nil {
			return err
		}
		objs = append(objs, obj)
	}
	var roots []*tree.Node
	for _, obj := range objs {
		namespace, targets := render.TargetsOf(obj)
		for _, t := range targets {
			if km.is(t.Group, t.Kind) {
				roots = append(roots, render.Target(namespace, t))
			}
		}
	}
	if err := d.writeHTML(roots, objs); err != nil {
		return err
	}
	if d.printsObjects() {
		return d.printObject(asList(objs, len(oa.names) == 1))
	}
	return d.printTrees(roots...)
}

// withTargets keeps the objects that have a target of the kind.
func withTargets(objs []runtime.Object, km kindMatch) []runtime.Object {
	var out []runtime.Object
	for _, obj := range objs {
		_, targets := render.TargetsOf(obj)
		for _, t := range targets {
			if km.is(t.Group, t.Kind) {
				out = append(out, obj)
				break
			}
		}
	}
	return out
}

func qualified(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

func inNamespace(ns string, namespaced bool) string {
	switch {
	case !namespaced:
		return ""
	case ns == "":
		return " in any namespace"
	}
	return " in namespace " + ns
}

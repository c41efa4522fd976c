package app

import (
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/render"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/tree"
)

type reachOptions struct {
	*Options
	allNamespaces bool
	cluster       bool
}

func newReachCommand(o *Options) *cobra.Command {
	r := &reachOptions{Options: o}
	cmd := &cobra.Command{
		Use:   "reach POLICYKIND/NAME | POLICYKIND [NAME...]",
		Short: "What a policy reaches, and with which outcome",
		Long: `Reach prints what a policy reaches (its PolicyReach): the targets it names and
whether they resolved, a summary of the targets it reaches by outcome, how many of
them are in namespaces you may not read, and every target it reaches with its
stanza, outcome and why.

A policy of a cluster-scoped kind has a ClusterPolicyReach; the kind's scope
decides (from the cluster, or offline from the manifests' CRDs). --cluster-scoped
reads the ClusterPolicyReach whatever the kind (for a kind the cluster does not
serve).
With POLICYKIND alone it prints the reach of every policy of that kind in the
namespace (-n) or in all (-A).`,
		Example: `  kubectl effectivepolicy reach retrypolicy/retry-all -n baker
  kubectl effectivepolicy reach timeoutpolicies -A
  kubectl effectivepolicy reach retrypolicy/retry-all -n baker --offline -f manifests/`,
		RunE: func(cmd *cobra.Command, args []string) error { return r.run(cmd, args) },
	}
	addHTMLFlag(cmd, o)
	cmd.Flags().BoolVarP(&r.allNamespaces, "all-namespaces", "A", false, "With POLICYKIND alone: policies in every namespace.")
	// Not --cluster: that is kubectl's (the kubeconfig cluster to use).
	cmd.Flags().BoolVar(&r.cluster, "cluster-scoped", false, "Read the ClusterPolicyReach: the policy is cluster-scoped.")
	return cmd
}

func (r *reachOptions) run(cmd *cobra.Command, args []string) error {
	oa, err := parseObjectArgs(args)
	if err != nil {
		return err
	}
	if r.allNamespaces && len(oa.names) > 0 {
		return fmt.Errorf("-A prints the reach of every policy of a kind: give POLICYKIND alone")
	}
	src, err := r.source()
	if err != nil {
		return err
	}
	km := resolveKind(src.Kinds(), oa.typ)
	cluster := r.cluster || !km.Namespaced
	ns := ""
	if !cluster && !r.allNamespaces {
		if ns, err = src.Namespace(); err != nil {
			return err
		}
	}
	ctx := commandContext(cmd)
	var objs []runtime.Object
	if len(oa.names) == 0 {
		list, err := src.PolicyReaches(ctx, ns, cluster)
		if err != nil {
			return err
		}
		objs = withPolicies(listItems(list), km)
		if len(objs) == 0 {
			fmt.Fprintf(r.ErrOut, "No %s policy%s.\n", km, inNamespace(ns, !cluster))
			return nil
		}
	}
	for _, name := range oa.names {
		obj, err := src.PolicyReach(ctx, ns, name)
		if apierrors.IsNotFound(err) || err == nil && len(withPolicies([]runtime.Object{obj}, km)) == 0 {
			return fmt.Errorf("no %s %s", km, qualified(ns, name))
		}
		if err != nil {
			return err
		}
		objs = append(objs, obj)
	}
	var roots []*tree.Node
	for _, obj := range objs {
		namespace, name, policies := render.PoliciesOf(obj)
		for _, rp := range policies {
			if km.is(rp.Group, rp.Kind) {
				roots = append(roots, render.Reach(namespace, name, rp))
			}
		}
	}
	if err := r.writeHTML(roots, nil); err != nil {
		return err
	}
	if r.printsObjects() {
		return r.printObject(asList(objs, len(oa.names) == 1))
	}
	return r.printTrees(roots...)
}

// withPolicies keeps the reaches that have a policy of the kind.
func withPolicies(objs []runtime.Object, km kindMatch) []runtime.Object {
	var out []runtime.Object
	for _, obj := range objs {
		_, _, policies := render.PoliciesOf(obj)
		for _, rp := range policies {
			if km.is(rp.Group, rp.Kind) {
				out = append(out, obj)
				break
			}
		}
	}
	return out
}

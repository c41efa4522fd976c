package render

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/tree"
)

// Target is one target of an EffectivePolicy (namespace "" for a
// ClusterEffectivePolicy): per policy kind its class (and whether its
// semantics were assumed), each effective entry
// (context) with the settings and the policy that set each one, and every
// source with its outcome and why.
func Target(namespace string, t v1alpha1.Target) *tree.Node {
	n := tree.New(tree.S(tree.Heading, t.Kind+" "+qualified(namespace, t.Name)))
	if len(t.Policies) == 0 {
		n.Add(tree.S(tree.Muted, "no policy reaches it"))
	}
	for _, tp := range t.Policies {
		n.Append(policyKind{group: tp.Group, kind: tp.Kind, class: tp.Class, semantics: tp.Semantics, effective: tp.Effective, sources: tp.Sources}.node())
	}
	return n
}

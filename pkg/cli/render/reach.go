package render

import (
	"fmt"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/tree"
)

// Reach is one policy kind of a PolicyReach (namespace "" for a
// ClusterPolicyReach): the targets the policy names and whether they
// resolved, the summary, how many targets are hidden from the reader, and
// every target it reaches with its verdict and why.
func Reach(namespace, name string, rp v1alpha1.ReachPolicy) *tree.Node {
	n := tree.New(append([]tree.Span{
		tree.S(tree.Kind, kindName(rp.Group, rp.Kind)), tree.P(" "),
		tree.S(tree.Heading, qualified(namespace, name)), tree.S(tree.Muted, "  "+string(rp.Class)),
	}, assumedMarker(rp.Semantics)...)...)
	att := n.Add(tree.P("attached to"))
	if len(rp.AttachedTo) == 0 {
		att.Add(tree.S(tree.Bad, "no target"))
	}
	for _, a := range rp.AttachedTo {
		att.Append(attachedNode(a))
	}
	s := rp.Summary
	n.Add(tree.P("summary: "+plural(s.Targets, "target")+": "),
		outcomeCount(s.Enforced, v1alpha1.OutcomeEnforced), tree.P(", "),
		outcomeCount(s.PartiallyEnforced, v1alpha1.OutcomePartiallyEnforced), tree.P(", "),
		outcomeCount(s.Overridden, v1alpha1.OutcomeOverridden), tree.P(", "),
		outcomeCount(s.Conflicted, v1alpha1.OutcomeConflicted), tree.P(", "),
		outcomeCount(s.Invalid, v1alpha1.OutcomeInvalid))
	if rp.HiddenTargets > 0 {
		n.Add(tree.S(tree.Warn, fmt.Sprintf("hidden targets: %d", rp.HiddenTargets)),
			tree.S(tree.Muted, " (in namespaces where you may not get effectivepolicies)"))
	} else {
		n.Add(tree.S(tree.Muted, "hidden targets: 0"))
	}
	reaches := n.Add(tree.P("reaches"))
	if len(rp.Reaches) == 0 {
		reaches.Add(tree.S(tree.Muted, "nothing"))
	}
	for _, r := range rp.Reaches {
		reaches.Append(reachNode(r, len(rp.AttachedTo) > 1))
	}
	return n
}

func attachedNode(a v1alpha1.AttachedTarget) *tree.Node {
	if a.Resolved {
		return tree.New(tree.P(Ref(a.Target)+"  "), tree.S(tree.Good, "resolved"))
	}
	n := tree.New(tree.P(Ref(a.Target)+"  "), tree.S(tree.Bad, "not resolved"))
	if a.Reason != "" {
		n.Line = append(n.Line, tree.S(tree.Muted, "  "+string(a.Reason)))
	}
	if a.Message != "" {
		n.Add(tree.P(a.Message))
	}
	return n
}

// reachNode is one reached target; the attachment point that leads there
// is shown when the policy has more than one.
func reachNode(r v1alpha1.Reach, showAttachment bool) *tree.Node {
	n := tree.New(tree.P(Ref(r.Target)+"  "), tree.S(outcomeStyle(r.Outcome), string(r.Outcome)))
	detail := string(r.Stanza)
	if showAttachment {
		if detail != "" {
			detail += ", "
		}
		detail += "from " + Ref(r.AttachedTo)
	}
	if detail != "" {
		n.Line = append(n.Line, tree.S(tree.Muted, "  "+detail))
	}
	if r.Message != "" {
		n.Add(tree.P(r.Message))
	}
	return n
}

// outcomeCount is "n Outcome", in the outcome's color unless n is 0.
func outcomeCount(n int32, o v1alpha1.Outcome) tree.Span {
	c := count(n, string(o))
	if n > 0 {
		c.Style = outcomeStyle(o)
	}
	return c
}

// Package render turns the API's answers into the plugin's trees
// (pkg/cli/tree): a target's effective policies (describe), a policy's
// reach (reach) and a request's path (trace). It reads only the API
// objects, so what the plugin prints from a cluster and from manifests
// (offline) is drawn by the same code.
package render

import (
	"fmt"
	"strings"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/tree"
)

// Ref writes an object reference as Kind namespace/name, with its
// section when it has one.
func Ref(r v1alpha1.ObjectReference) string {
	s := r.Kind + " " + qualified(r.Namespace, r.Name)
	if r.SectionName != "" {
		s += " (section " + r.SectionName + ")"
	}
	return s
}

// qualified is namespace/name, or name for a cluster-scoped object.
func qualified(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// kindName is a kind as kubectl writes a resource: Kind.group, or Kind for
// the core group.
func kindName(group, kind string) string {
	if group == "" {
		return kind
	}
	return kind + "." + group
}

// outcomeStyle colors a verdict: kept green, partly kept yellow, lost red.
func outcomeStyle(o v1alpha1.Outcome) tree.Style {
	switch o {
	case v1alpha1.OutcomeEnforced:
		return tree.Good
	case v1alpha1.OutcomePartiallyEnforced, v1alpha1.OutcomeOverridden:
		return tree.Warn
	default:
		return tree.Bad
	}
}

// via writes the attachment points merged in a context, least specific
// first.
func via(refs []v1alpha1.ObjectReference) string {
	if len(refs) == 0 {
		return "(no attachment point)"
	}
	parts := make([]string, len(refs))
	for i, r := range refs {
		parts[i] = Ref(r)
	}
	return strings.Join(parts, " › ")
}

// assumedMarker is what follows the kind on the line of a kind whose
// semantics were assumed (docs/spec.md §4.1, "Saying when we guess"): its
// answers are the GEP fold's guess, not its implementation's rules. Nothing
// for a kind a descriptor describes.
func assumedMarker(semantics string) []tree.Span {
	if semantics != v1alpha1.SemanticsAssumed {
		return nil
	}
	return []tree.Span{tree.P("  "), tree.S(tree.Warn, "semantics assumed"),
		tree.S(tree.Muted, " (GEP fold; no descriptor describes this kind)")}
}

// policyKind is a policy kind's part of a target, as describe and trace
// show it: its effective entries and its sources.
type policyKind struct {
	group, kind string
	class       v1alpha1.PolicyClass
	semantics   string
	effective   []v1alpha1.EffectiveSpec
	sources     []v1alpha1.PolicySource
}

func (p policyKind) node() *tree.Node {
	n := tree.New(append([]tree.Span{tree.S(tree.Kind, kindName(p.group, p.kind)), tree.S(tree.Muted, "  "+string(p.class))},
		assumedMarker(p.semantics)...)...)
	if len(p.effective) == 0 {
		n.Add(tree.S(tree.Muted, "no effective settings"))
	}
	for _, e := range p.effective {
		n.Append(effectiveNode(e))
	}
	if len(p.sources) > 0 {
		s := n.Add(tree.P("sources"))
		for _, src := range p.sources {
			s.Append(sourceNode(src))
		}
	}
	return n
}

// effectiveNode is one effective entry: its context (section, via) over
// its settings.
func effectiveNode(e v1alpha1.EffectiveSpec) *tree.Node {
	var line []tree.Span
	if e.SectionName != "" {
		line = append(line, tree.P("section "), tree.S(tree.Heading, e.SectionName), tree.P(", "))
	}
	line = append(line, tree.P("via "+via(e.Via)))
	n := tree.New(line...)
	settings(n, e.Spec.Raw, e.FieldSources)
	return n
}

// sourceNode is one source: the policy, its verdict, how it is attached and
// merged, and why (the message).
func sourceNode(s v1alpha1.PolicySource) *tree.Node {
	n := tree.New(
		tree.S(tree.Heading, qualified(s.Namespace, s.Name)),
		tree.P("  "), tree.S(outcomeStyle(s.Outcome), string(s.Outcome)),
		tree.S(tree.Muted, "  "+sourceDetail(s, s.MergeStrategy)),
	)
	if s.Message != "" {
		n.Add(tree.P(s.Message))
	}
	return n
}

// sourceDetail is how a source takes part: its stanza, the merge strategy
// written as given (a diff writes "A -> B"), and where it is attached.
func sourceDetail(s v1alpha1.PolicySource, strategy v1alpha1.MergeStrategy) string {
	var detail []string
	if s.Stanza != v1alpha1.StanzaNone {
		detail = append(detail, string(s.Stanza))
	}
	if strategy != "" && strategy != v1alpha1.MergeNone {
		detail = append(detail, "("+string(strategy)+")")
	}
	detail = append(detail, "on "+Ref(s.AttachedTo))
	return strings.Join(detail, " ")
}

// count writes n things, muted when there are none.
func count(n int32, what string) tree.Span {
	s := fmt.Sprintf("%d %s", n, what)
	if n == 0 {
		return tree.S(tree.Muted, s)
	}
	return tree.P(s)
}

// plural writes "1 target", "2 targets".
func plural(n int32, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

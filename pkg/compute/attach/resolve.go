package attach

// Resolving a policy's targets to attachment nodes (docs/spec.md §3:
// targetRef(s), sectionName, selectors, ReferenceGrants, virtual targets).
// Resolving only reads; the Index records what it resolves (attach.go).

import (
	"fmt"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// resolver resolves the targets of the policies of one kind.
type resolver struct {
	in *Inputs
	// unnamedRules says that the kind's profile addresses a route's unnamed
	// rules as rule-<index+1>.
	unnamedRules bool
}

// resolverFor returns the resolver of p's kind.
func (x *Index) resolverFor(p *semantics.Policy) resolver {
	ki := x.kinds[p.ID.GK]
	return resolver{in: &x.in, unnamedRules: ki != nil && ki.Kind.Profile.UnnamedRuleSections()}
}

func (x resolver) resolve(p *semantics.Policy) semantics.Resolution {
	var r semantics.Resolution
	seen := map[topology.NodeID]bool{}
	add := func(a semantics.Attachment) {
		if seen[a.Node] {
			return
		}
		seen[a.Node] = true
		r.Attachments = append(r.Attachments, a)
	}
	for _, ref := range p.Refs {
		if ref.Invalid != "" {
			continue
		}
		t := ref.Target
		r.Named = append(r.Named, t.Object())
		if ref.ExplicitNS && p.ID.Namespace != "" {
			r.CrossNS = append(r.CrossNS, topology.GrantNamespace(t))
		}
		if a, found := x.resolveRef(p, ref); found {
			add(a)
		}
	}
	if len(p.Selectors) > 0 && p.ID.Namespace != "" {
		for _, n := range x.selected(p) {
			add(semantics.Attachment{Node: n, Invalid: p.Invalid})
		}
	}
	if p.Untargeted && p.ID.Namespace != "" {
		add(semantics.Attachment{Node: topology.NamespaceNode(p.ID.Namespace), Invalid: p.Invalid})
	}
	if len(r.Attachments) == 0 && p.Invalid != "" && p.ID.Namespace != "" {
		add(semantics.Attachment{Node: topology.NamespaceNode(p.ID.Namespace), Invalid: p.Invalid})
	}
	return r
}

// resolveRef resolves one well-formed targetRef of p: found=false when it
// names a served kind's object that does not exist (it reaches nothing);
// else the attachment, Invalid (with why) when p is malformed or the target
// is in another namespace without a ReferenceGrant allowing p there.
func (x resolver) resolveRef(p *semantics.Policy, ref semantics.NamedRef) (a semantics.Attachment, found bool) {
	t := ref.Target
	g := x.in.Graph
	switch {
	case !x.in.Served(t.GK()):
		a.Virtual = true
		a.Node = t
		if !g.Exists(t) {
			a.Node.Namespace = p.ID.Namespace
		}
	case g.Exists(t), x.unnamedRuleFor(p, t):
		a.Node = t
	default:
		return a, false
	}
	switch {
	case p.Invalid != "":
		a.Invalid = p.Invalid
	case ref.ExplicitNS && p.ID.Namespace != "" && !x.granted(p, t):
		a.Invalid = fmt.Sprintf("target %s is in namespace %q and no ReferenceGrant there allows %s from namespace %q to reach it", t, topology.GrantNamespace(t), p.ID.GK.Kind, p.ID.Namespace)
	}
	return a, true
}

// selected lists, in node order, the objects p's label selectors pick: in the policy's
// namespace, and for a wide selector in the namespaces it names where a ReferenceGrant lets p
// reach the object (Envoy Gateway ignores a selected target without one, silently:
// internal/gatewayapi/helpers.go resolvePolicyTargetsFromSelectors) or where it needs none (an
// Istio root namespace selector: Istio has no ReferenceGrant check there).
func (x resolver) selected(p *semantics.Policy) []topology.NodeID {
	var matched []topology.NodeID
	g := x.in.Graph
	for _, s := range p.Selectors {
		for _, ns := range x.selectorNamespaces(p, s) {
			for n := range g.ByNS[ns] {
				if g.Objects[n] == 0 || s.GK != n.GK() || !s.Selector.Matches(x.labelsFor(s, n)) {
					continue
				}
				if ns != p.ID.Namespace && !s.Ungranted && !x.granted(p, n) {
					continue
				}
				matched = append(matched, n)
			}
		}
	}
	sort.Slice(matched, func(i, j int) bool { return topology.LessNode(matched[i], matched[j]) })
	return slices.Compact(matched)
}

// labelsFor is what selector s matches of object n: its labels, or for an Istio workload
// selector the labels Istio's deployment controller gives a Gateway's pods (its own among them).
func (x resolver) labelsFor(s semantics.SelectorRef, n topology.NodeID) labels.Set {
	if s.GatewayPods {
		return labels.Set(semantics.GatewayPodLabels(n.Name, x.classOf(n), x.in.Labels[n]))
	}
	return labels.Set(x.in.Labels[n])
}

// classOf is the GatewayClass of Gateway n ("" when it has none the graph knows).
func (x resolver) classOf(n topology.NodeID) string {
	for class, gws := range x.in.Graph.GatewaysByClass {
		if gws[n] {
			return class
		}
	}
	return ""
}

// selectorNamespaces lists the namespaces selector s of p looks in: the policy's own, or for
// a wide selector every namespace with objects (All) or those whose Namespace object's labels
// match (Selector; Envoy Gateway's targetSelectorNamespacesMatch, the policy's own namespace
// included only when it matches).
func (x resolver) selectorNamespaces(p *semantics.Policy, s semantics.SelectorRef) []string {
	if !s.Wide {
		return []string{p.ID.Namespace}
	}
	var out []string
	for ns := range x.in.Graph.ByNS {
		lbls, ok := x.in.Graph.NSLabels[ns]
		if s.NamespaceSelector == nil || ok && s.NamespaceSelector.Matches(labels.Set(lbls)) {
			out = append(out, ns)
		}
	}
	return out
}

// unnamedRuleFor reports whether t is a route's unnamed rule addressed as
// rule-<index+1> by a policy whose profile addresses unnamed rules so.
func (x resolver) unnamedRuleFor(p *semantics.Policy, t topology.NodeID) bool {
	if !x.unnamedRules || t.Section == "" || !topology.IsRouteGK(t.GK()) {
		return false
	}
	g := x.in.Graph
	if r := g.Routes[t.Object()]; r != nil && g.Objects[t.Object()] > 0 {
		for _, ru := range r.Rules {
			if ru.Unnamed && ru.Section == t.Section {
				return true
			}
		}
	}
	return false
}

func (x resolver) granted(p *semantics.Policy, t topology.NodeID) bool {
	return x.in.Graph.Grants.Allows(p.ID.GK.Group, p.ID.GK.Kind, p.ID.Namespace, t)
}

// AttachedTo lists what p names and whether each resolved, with the same
// rules as resolving p (docs/spec.md §8: what a PolicyReach shows of it).
func (x *Index) AttachedTo(p *semantics.Policy) []v1alpha1.AttachedTarget {
	return x.resolverFor(p).attachedTo(p)
}

func (x resolver) attachedTo(p *semantics.Policy) []v1alpha1.AttachedTarget {
	out := make([]v1alpha1.AttachedTarget, 0, len(p.Refs))
	listed := map[topology.NodeID]bool{}
	for _, ref := range p.Refs {
		at := v1alpha1.AttachedTarget{Target: ref.Target.Ref()}
		listed[ref.Target] = true
		if ref.Invalid != "" {
			at.Reason, at.Message = v1alpha1.ReasonMalformed, ref.Invalid
			out = append(out, at)
			continue
		}
		a, found := x.resolveRef(p, ref)
		switch {
		case !found:
			at.Reason, at.Message = v1alpha1.ReasonTargetNotFound, fmt.Sprintf("%s does not exist", ref.Target)
		case a.Invalid == "":
			at.Resolved = true
		case p.Invalid != "":
			at.Reason, at.Message = v1alpha1.ReasonMalformed, p.Invalid
		default:
			at.Reason, at.Message = v1alpha1.ReasonReferenceGrantMissing, a.Invalid
		}
		out = append(out, at)
	}
	if p.Untargeted && p.ID.Namespace != "" {
		at := v1alpha1.AttachedTarget{Target: topology.NamespaceNode(p.ID.Namespace).Ref(), Resolved: p.Invalid == ""}
		if p.Invalid != "" {
			at.Reason, at.Message = v1alpha1.ReasonMalformed, p.Invalid
		}
		out = append(out, at)
	}
	if len(p.Selectors) > 0 && p.ID.Namespace != "" {
		for _, n := range x.selected(p) {
			if listed[n] {
				continue
			}
			at := v1alpha1.AttachedTarget{Target: n.Ref(), Resolved: p.Invalid == ""}
			if p.Invalid != "" {
				at.Reason, at.Message = v1alpha1.ReasonMalformed, p.Invalid
			}
			out = append(out, at)
		}
	}
	return out
}

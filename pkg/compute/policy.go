package compute

// Policies on the graph: applying a policy object, resolving its targets to
// attachment nodes (docs/spec.md §3: targetRef(s), sectionName, selectors,
// ReferenceGrants, virtual targets) and re-resolving them when the topology
// changes.

import (
	"fmt"
	"reflect"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/policies"
)

func (st *state) applyPolicy(gk schema.GroupKind, ns, name string, u *unstructured.Unstructured) []Key {
	ki := st.kinds[gk]
	if !ki.pk.Namespaced {
		ns = ""
	} else if ns == "" {
		return nil
	}
	id := semantics.PolicyID{GK: gk, Namespace: ns, Name: name}
	ks := keySet{}
	old := st.policies[id]
	if u != nil && old != nil && reflect.DeepEqual(old.Raw["spec"], u.Object["spec"]) && old.Created.Equal(u.GetCreationTimestamp().Time) {
		// Nothing any output shows changed; the labels (copied onto the
		// policy's PolicyReach) may have.
		st.structural = false
		if l := u.GetLabels(); !sameLabels(old.Labels, l) {
			old.Labels = l
			st.policyChanged(id)
		}
		return nil
	}
	st.policyChanged(id)
	var oldRes semantics.Resolution
	if old != nil {
		oldRes = old.Resolution
		st.affect(old, ks)
		st.unapply(old)
		delete(st.policies, id)
	}
	if u != nil {
		// Keep a private copy of the spec (descriptor paths all start at
		// spec; the rest of the object is not needed): callers may reuse
		// their object.
		p := policies.Parse(ki.pk, specOnlyCopy(u.Object), ns, name, u.GetCreationTimestamp().Time, st.defaultStrategy, st.clusterScoped)
		p.Labels = u.GetLabels()
		st.policies[id] = p
		p.Resolution = st.resolve(p)
		st.applyRes(p, 1)
		st.affect(p, ks)
		// Same attachment points: the contexts (paths and vias) of every
		// target are unchanged, only folds are.
		if old != nil && old.Class == p.Class && slices.Equal(oldRes.Attachments, p.Resolution.Attachments) {
			st.structural = false
		}
	}
	return ks.sorted()
}

// sameLabels compares label sets (nil and empty are the same).
func sameLabels(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// specOnlyCopy copies what policies.Parse reads of a policy object: its spec
// (or its absence).
func specOnlyCopy(obj map[string]interface{}) map[string]interface{} {
	spec, ok := obj["spec"]
	if !ok {
		return map[string]interface{}{}
	}
	return map[string]interface{}{"spec": policies.DeepCopyValue(spec)}
}

// reresolve recomputes the attachments of ps, adding old and new reach to ks.
func (st *state) reresolve(ps []*semantics.Policy, ks keySet) {
	for _, p := range ps {
		st.policyChanged(p.ID)
		st.affect(p, ks)
		st.unapply(p)
		p.Resolution = st.resolve(p)
		st.applyRes(p, 1)
		st.affect(p, ks)
	}
}

func (st *state) unapply(p *semantics.Policy) {
	st.applyRes(p, -1)
	p.Resolution = semantics.Resolution{}
}

// affect adds the keys a policy's current attachments reach.
func (st *state) affect(p *semantics.Policy, ks keySet) {
	if st.bulk {
		return
	}
	seen := topology.Visited{}
	for _, a := range p.Resolution.Attachments {
		ks[keyOf(a.Node)] = true
		if a.Invalid == "" && p.Class == v1alpha1.ClassInherited {
			st.subtree(a.Node, ks, seen)
		}
	}
}

func (st *state) resolve(p *semantics.Policy) semantics.Resolution {
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
		if a, found := st.resolveRef(p, ref); found {
			add(a)
		}
	}
	if len(p.Selectors) > 0 && p.ID.Namespace != "" {
		for _, n := range st.selected(p) {
			add(semantics.Attachment{Node: n, Invalid: p.Invalid})
		}
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
func (st *state) resolveRef(p *semantics.Policy, ref semantics.NamedRef) (a semantics.Attachment, found bool) {
	t := ref.Target
	switch {
	case !st.served(t.GK()):
		a.Virtual = true
		a.Node = t
		if !st.graph.Exists(t) {
			a.Node.Namespace = p.ID.Namespace
		}
	case st.graph.Exists(t), st.unnamedRuleFor(p, t):
		a.Node = t
	default:
		return a, false
	}
	switch {
	case p.Invalid != "":
		a.Invalid = p.Invalid
	case ref.ExplicitNS && p.ID.Namespace != "" && !st.granted(p, t):
		a.Invalid = fmt.Sprintf("target %s is in namespace %q and no ReferenceGrant there allows %s from namespace %q to reach it", t, topology.GrantNamespace(t), p.ID.GK.Kind, p.ID.Namespace)
	}
	return a, true
}

// selected lists, in node order, the objects p's label selectors pick: in the policy's
// namespace, and for a wide selector in the namespaces it names where a ReferenceGrant lets p
// reach the object (Envoy Gateway ignores a selected target without one, silently:
// internal/gatewayapi/helpers.go resolvePolicyTargetsFromSelectors).
func (st *state) selected(p *semantics.Policy) []topology.NodeID {
	var matched []topology.NodeID
	for _, s := range p.Selectors {
		for _, ns := range st.selectorNamespaces(p, s) {
			for n := range st.graph.ByNS[ns] {
				if st.graph.Objects[n] == 0 || s.GK != n.GK() || !s.Selector.Matches(labels.Set(st.objLabels[n])) {
					continue
				}
				if ns != p.ID.Namespace && !st.granted(p, n) {
					continue
				}
				matched = append(matched, n)
			}
		}
	}
	sort.Slice(matched, func(i, j int) bool { return topology.LessNode(matched[i], matched[j]) })
	return slices.Compact(matched)
}

// selectorNamespaces lists the namespaces selector s of p looks in: the policy's own, or for
// a wide selector every namespace with objects (All) or those whose Namespace object's labels
// match (Selector; Envoy Gateway's targetSelectorNamespacesMatch, the policy's own namespace
// included only when it matches).
func (st *state) selectorNamespaces(p *semantics.Policy, s semantics.SelectorRef) []string {
	if !s.Wide {
		return []string{p.ID.Namespace}
	}
	var out []string
	for ns := range st.graph.ByNS {
		lbls, ok := st.graph.NSLabels[ns]
		if s.NamespaceSelector == nil || ok && s.NamespaceSelector.Matches(labels.Set(lbls)) {
			out = append(out, ns)
		}
	}
	return out
}

// unnamedRuleFor reports whether t is a route's unnamed rule addressed as
// rule-<index+1> by a policy whose profile addresses unnamed rules so.
func (st *state) unnamedRuleFor(p *semantics.Policy, t topology.NodeID) bool {
	ki := st.kinds[p.ID.GK]
	if ki == nil || !ki.pk.Profile.UnnamedRuleSections() || t.Section == "" || !topology.IsRouteGK(t.GK()) {
		return false
	}
	if r := st.graph.Routes[t.Object()]; r != nil && st.graph.Objects[t.Object()] > 0 {
		for _, ru := range r.Rules {
			if ru.Unnamed && ru.Section == t.Section {
				return true
			}
		}
	}
	return false
}

func (st *state) applyRes(p *semantics.Policy, d int) {
	ki := st.kinds[p.ID.GK]
	for _, a := range p.Resolution.Attachments {
		o := a.Node.Object()
		if a.Virtual {
			st.graph.BumpVirtual(o, d)
		}
		switch {
		case a.Invalid != "":
			st.applyInvalidAttachment(ki, p, a, o, d)
		case ki != nil:
			st.applyAttachment(ki, p, a, o, d)
		}
	}
	for _, n := range p.Resolution.Named {
		updateSet(st.byTarget, n, p, d)
	}
	for _, ns := range p.Resolution.CrossNS {
		updateSet(st.crossNS, ns, p, d)
	}
	if len(p.Selectors) > 0 && p.ID.Namespace != "" {
		updateSet(st.selPolicies, p.ID.Namespace, p, d)
		if p.WideSelectors() {
			updateSet(st.selPolicies, anyNamespace, p, d)
		}
	}
}

// applyInvalidAttachment adds (d > 0) or removes p's Invalid listing at
// owner object o of the attachment a.
func (st *state) applyInvalidAttachment(ki *kindIndex, p *semantics.Policy, a semantics.Attachment, o topology.NodeID, d int) {
	if ki != nil {
		if d > 0 {
			ki.invalid[o] = append(ki.invalid[o], invalidAt{pol: p, node: a.Node, msg: a.Invalid})
		} else if l := dropFrom(ki.invalid[o], func(x invalidAt) bool { return x.pol == p }); len(l) == 0 {
			delete(ki.invalid, o)
		} else {
			ki.invalid[o] = l
		}
	}
	addCount(st.invalidKeys, keyOf(o), o, d)
}

// applyAttachment adds (d > 0) or removes p at the attachment node of a,
// bumping the generation the fold memo is checked against.
func (st *state) applyAttachment(ki *kindIndex, p *semantics.Policy, a semantics.Attachment, o topology.NodeID, d int) {
	st.touch(ki, a.Node)
	ki.rejectDirty = true
	if d > 0 {
		ki.at[a.Node] = append(ki.at[a.Node], p)
	} else if l := dropFrom(ki.at[a.Node], func(x *semantics.Policy) bool { return x == p }); len(l) == 0 {
		delete(ki.at, a.Node)
		delete(ki.gen, a.Node)
	} else {
		ki.at[a.Node] = l
	}
	if a.Node.Section != "" {
		addCount(ki.sections, o, a.Node.Section, d)
	}
}

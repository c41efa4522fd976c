package compute

// Policies on the graph: applying a policy object, resolving its targets to
// attachment nodes (SPEC §3: targetRef(s), sectionName, selectors,
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
)

func (st *state) applyPolicy(gk schema.GroupKind, ns, name string, u *unstructured.Unstructured) []Key {
	ki := st.kinds[gk]
	if !ki.pk.namespaced {
		ns = ""
	} else if ns == "" {
		return nil
	}
	id := policyID{gk: gk, namespace: ns, nm: name}
	ks := keySet{}
	old := st.policies[id]
	if u != nil && old != nil && reflect.DeepEqual(old.raw["spec"], u.Object["spec"]) && old.ts.Equal(u.GetCreationTimestamp().Time) {
		// Nothing any output shows changed; the labels (copied onto the
		// policy's PolicyReach) may have.
		st.structural = false
		if l := u.GetLabels(); !sameLabels(old.labels, l) {
			old.labels = l
			st.policyChanged(id)
		}
		return nil
	}
	st.policyChanged(id)
	var oldRes resolution
	if old != nil {
		oldRes = old.res
		st.affect(old, ks)
		st.unapply(old)
		delete(st.policies, id)
	}
	if u != nil {
		// Keep a private copy of the spec (descriptor paths all start at
		// spec; the rest of the object is not needed): callers may reuse
		// their object.
		p := parsePolicy(ki.pk, specOnlyCopy(u.Object), ns, name, u.GetCreationTimestamp().Time, st.defaultStrategy, st.clusterScoped)
		p.labels = u.GetLabels()
		st.policies[id] = p
		p.res = st.resolve(p)
		st.applyRes(p, 1)
		st.affect(p, ks)
		// Same attachment points: the contexts (paths and vias) of every
		// target are unchanged, only folds are.
		if old != nil && old.class == p.class && slices.Equal(oldRes.atts, p.res.atts) {
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

// specOnlyCopy copies what parsePolicy reads of a policy object: its spec
// (or its absence).
func specOnlyCopy(obj map[string]interface{}) map[string]interface{} {
	spec, ok := obj["spec"]
	if !ok {
		return map[string]interface{}{}
	}
	return map[string]interface{}{"spec": deepCopyValue(spec)}
}

// reresolve recomputes the attachments of ps, adding old and new reach to ks.
func (st *state) reresolve(ps []*policy, ks keySet) {
	for _, p := range ps {
		st.policyChanged(p.id)
		st.affect(p, ks)
		st.unapply(p)
		p.res = st.resolve(p)
		st.applyRes(p, 1)
		st.affect(p, ks)
	}
}

func (st *state) unapply(p *policy) {
	st.applyRes(p, -1)
	p.res = resolution{}
}

// affect adds the keys a policy's current attachments reach.
func (st *state) affect(p *policy, ks keySet) {
	if st.bulk {
		return
	}
	seen := visited{}
	for _, a := range p.res.atts {
		ks[a.node.key()] = true
		if a.invalid == "" && p.class == v1alpha1.ClassInherited {
			st.subtree(a.node, ks, seen)
		}
	}
}

func (st *state) resolve(p *policy) resolution {
	var r resolution
	seen := map[nodeID]bool{}
	add := func(a attachment) {
		if seen[a.node] {
			return
		}
		seen[a.node] = true
		r.atts = append(r.atts, a)
	}
	for _, ref := range p.refs {
		if ref.invalid != "" {
			continue
		}
		t := ref.target
		r.named = append(r.named, t.object())
		if ref.explNS && p.id.namespace != "" {
			r.crossNS = append(r.crossNS, grantNamespace(t))
		}
		if a, found := st.resolveRef(p, ref); found {
			add(a)
		}
	}
	if len(p.selectors) > 0 && p.id.namespace != "" {
		for _, n := range st.selected(p) {
			add(attachment{node: n, invalid: p.invalid})
		}
	}
	if len(r.atts) == 0 && p.invalid != "" && p.id.namespace != "" {
		add(attachment{node: namespaceNode(p.id.namespace), invalid: p.invalid})
	}
	return r
}

// resolveRef resolves one well-formed targetRef of p: found=false when it
// names a served kind's object that does not exist (it reaches nothing);
// else the attachment, Invalid (with why) when p is malformed or the target
// is in another namespace without a ReferenceGrant allowing p there.
func (st *state) resolveRef(p *policy, ref namedRef) (a attachment, found bool) {
	t := ref.target
	switch {
	case !st.served(t.gk()):
		a.virtual = true
		a.node = t
		if !st.exists(t) {
			a.node.Namespace = p.id.namespace
		}
	case st.exists(t), st.unnamedRuleFor(p, t):
		a.node = t
	default:
		return a, false
	}
	switch {
	case p.invalid != "":
		a.invalid = p.invalid
	case ref.explNS && p.id.namespace != "" && !st.granted(p, t):
		a.invalid = fmt.Sprintf("target %s is in namespace %q and no ReferenceGrant there allows %s from namespace %q to reach it", t, grantNamespace(t), p.id.gk.Kind, p.id.namespace)
	}
	return a, true
}

// selected lists, in node order, the objects p's label selectors pick: in the policy's
// namespace, and for a wide selector in the namespaces it names where a ReferenceGrant lets p
// reach the object (Envoy Gateway ignores a selected target without one, silently:
// internal/gatewayapi/helpers.go resolvePolicyTargetsFromSelectors).
func (st *state) selected(p *policy) []nodeID {
	var matched []nodeID
	for _, s := range p.selectors {
		for _, ns := range st.selectorNamespaces(p, s) {
			for n := range st.byNS[ns] {
				if st.objects[n] == 0 || s.gk != n.gk() || !s.sel.Matches(labels.Set(st.objLabels[n])) {
					continue
				}
				if ns != p.id.namespace && !st.granted(p, n) {
					continue
				}
				matched = append(matched, n)
			}
		}
	}
	sort.Slice(matched, func(i, j int) bool { return lessNode(matched[i], matched[j]) })
	return slices.Compact(matched)
}

// selectorNamespaces lists the namespaces selector s of p looks in: the policy's own, or for
// a wide selector every namespace with objects (All) or those whose Namespace object's labels
// match (Selector; Envoy Gateway's targetSelectorNamespacesMatch, the policy's own namespace
// included only when it matches).
func (st *state) selectorNamespaces(p *policy, s selectorRef) []string {
	if !s.wide {
		return []string{p.id.namespace}
	}
	var out []string
	for ns := range st.byNS {
		lbls, ok := st.nsLabels[ns]
		if s.nsSel == nil || ok && s.nsSel.Matches(labels.Set(lbls)) {
			out = append(out, ns)
		}
	}
	return out
}

// unnamedRuleFor reports whether t is a route's unnamed rule addressed as
// rule-<index+1> by a policy whose profile addresses unnamed rules so.
func (st *state) unnamedRuleFor(p *policy, t nodeID) bool {
	ki := st.kinds[p.id.gk]
	if ki == nil || !ki.pk.prof.unnamedRuleSections() || t.Section == "" || !isRouteGK(t.gk()) {
		return false
	}
	if r := st.routes[t.object()]; r != nil && st.objects[t.object()] > 0 {
		for _, ru := range r.rules {
			if ru.unnamed && ru.section == t.Section {
				return true
			}
		}
	}
	return false
}

func (st *state) applyRes(p *policy, d int) {
	ki := st.kinds[p.id.gk]
	for _, a := range p.res.atts {
		o := a.node.object()
		if a.virtual {
			st.bump(st.virt, o, d)
		}
		switch {
		case a.invalid != "":
			st.applyInvalidAttachment(ki, p, a, o, d)
		case ki != nil:
			st.applyAttachment(ki, p, a, o, d)
		}
	}
	for _, n := range p.res.named {
		updateSet(st.byTarget, n, p, d)
	}
	for _, ns := range p.res.crossNS {
		updateSet(st.crossNS, ns, p, d)
	}
	if len(p.selectors) > 0 && p.id.namespace != "" {
		updateSet(st.selPolicies, p.id.namespace, p, d)
		if p.wideSelectors() {
			updateSet(st.selPolicies, anyNamespace, p, d)
		}
	}
}

// applyInvalidAttachment adds (d > 0) or removes p's Invalid listing at
// owner object o of the attachment a.
func (st *state) applyInvalidAttachment(ki *kindIndex, p *policy, a attachment, o nodeID, d int) {
	if ki != nil {
		if d > 0 {
			ki.invalid[o] = append(ki.invalid[o], invalidAt{pol: p, node: a.node, msg: a.invalid})
		} else if l := dropFrom(ki.invalid[o], func(x invalidAt) bool { return x.pol == p }); len(l) == 0 {
			delete(ki.invalid, o)
		} else {
			ki.invalid[o] = l
		}
	}
	addCount(st.invalidKeys, o.key(), o, d)
}

// applyAttachment adds (d > 0) or removes p at the attachment node of a,
// bumping the generation the fold memo is checked against.
func (st *state) applyAttachment(ki *kindIndex, p *policy, a attachment, o nodeID, d int) {
	st.touch(ki, a.node)
	ki.rejectDirty = true
	if d > 0 {
		ki.at[a.node] = append(ki.at[a.node], p)
	} else if l := dropFrom(ki.at[a.node], func(x *policy) bool { return x == p }); len(l) == 0 {
		delete(ki.at, a.node)
		delete(ki.gen, a.node)
	} else {
		ki.at[a.node] = l
	}
	if a.node.Section != "" {
		addCount(ki.sections, o, a.node.Section, d)
	}
}

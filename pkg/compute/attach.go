package compute

// Policies on the graph: applying a policy object, resolving its targets to
// attachment nodes (SPEC §3: targetRef(s), sectionName, selectors,
// ReferenceGrants, virtual targets) and re-resolving them when the topology
// changes.

import (
	"fmt"
	"reflect"
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
		return nil
	}
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
		st.policies[id] = p
		p.res = st.resolve(p)
		st.applyRes(p, 1)
		st.affect(p, ks)
		// Same attachment points: the contexts (paths and vias) of every
		// target are unchanged, only folds are.
		if old != nil && old.class == p.class && sameAttachments(oldRes.atts, p.res.atts) {
			st.structural = false
		}
	}
	return ks.sorted()
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
		st.affect(p, ks)
		st.unapply(p)
		p.res = st.resolve(p)
		st.applyRes(p, 1)
		st.affect(p, ks)
	}
}

func sameAttachments(a, b []attachment) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
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
	seen := map[nodeID]bool{}
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
		cross := ref.explNS && p.id.namespace != ""
		if cross {
			r.crossNS = append(r.crossNS, grantNamespace(t))
		}
		var a attachment
		switch {
		case !st.served(t.gk()):
			a.virtual = true
			a.node = t
			if !st.exists(t) {
				a.node.Namespace = p.id.namespace
			}
		case st.exists(t):
			a.node = t
		default:
			continue // a served kind that does not exist reaches nothing
		}
		switch {
		case p.invalid != "":
			a.invalid = p.invalid
		case cross && !st.granted(p, t):
			a.invalid = fmt.Sprintf("target %s is in namespace %q and no ReferenceGrant there allows %s from namespace %q to reach it", t, grantNamespace(t), p.id.gk.Kind, p.id.namespace)
		}
		add(a)
	}
	if len(p.selectors) > 0 && p.id.namespace != "" {
		var matched []nodeID
		for n := range st.byNS[p.id.namespace] {
			if st.objects[n] == 0 {
				continue
			}
			for _, s := range p.selectors {
				if s.gk == n.gk() && s.sel.Matches(labels.Set(st.objLabels[n])) {
					matched = append(matched, n)
					break
				}
			}
		}
		sort.Slice(matched, func(i, j int) bool { return lessNode(matched[i], matched[j]) })
		for _, n := range matched {
			add(attachment{node: n, invalid: p.invalid})
		}
	}
	if len(r.atts) == 0 && p.invalid != "" && p.id.namespace != "" {
		add(attachment{node: namespaceNode(p.id.namespace), invalid: p.invalid})
	}
	return r
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
	st.attGen++
	ki.gen[a.node] = st.attGen
	ki.changed = st.attGen
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

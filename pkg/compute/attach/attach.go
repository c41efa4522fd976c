package attach

// Attaching and detaching policies: the indexes by kind and node, and the
// reverse indexes that say which policies a topology change concerns.

import (
	"github.com/effectivepolicy-dev/effectivepolicy/internal/setmap"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// Add records policy p (of a policy kind of the Index), resolves it and
// attaches it there.
func (x *Index) Add(p *semantics.Policy) {
	x.policies[p.ID] = p
	p.Resolution = x.resolverFor(p).resolve(p)
	x.applyRes(p, 1)
}

// Remove detaches policy p and forgets it.
func (x *Index) Remove(p *semantics.Policy) {
	x.unapply(p)
	delete(x.policies, p.ID)
}

// Reresolve recomputes where p attaches, after a change of what its
// targets resolve to.
func (x *Index) Reresolve(p *semantics.Policy) {
	x.unapply(p)
	p.Resolution = x.resolverFor(p).resolve(p)
	x.applyRes(p, 1)
}

func (x *Index) unapply(p *semantics.Policy) {
	x.applyRes(p, -1)
	p.Resolution = semantics.Resolution{}
}

func (x *Index) applyRes(p *semantics.Policy, d int) {
	ki := x.kinds[p.ID.GK]
	for _, a := range p.Resolution.Attachments {
		o := a.Node.Object()
		if a.Virtual {
			x.in.Graph.BumpVirtual(o, d)
		}
		switch {
		case a.Invalid != "":
			x.applyInvalidAttachment(ki, p, a, o, d)
		case ki != nil:
			x.applyAttachment(ki, p, a, o, d)
		}
	}
	for _, n := range p.Resolution.Named {
		updateSet(x.byTarget, n, p, d)
	}
	for _, ns := range p.Resolution.CrossNS {
		updateSet(x.crossNS, ns, p, d)
	}
	if len(p.Selectors) > 0 && p.ID.Namespace != "" {
		updateSet(x.selPolicies, p.ID.Namespace, p, d)
		if p.WideSelectors() {
			updateSet(x.selPolicies, anyNamespace, p, d)
		}
	}
}

// applyInvalidAttachment adds (d > 0) or removes p's Invalid listing at
// owner object o of the attachment a.
func (x *Index) applyInvalidAttachment(ki *KindIndex, p *semantics.Policy, a semantics.Attachment, o topology.NodeID, d int) {
	if ki != nil {
		if d > 0 {
			ki.invalid[o] = append(ki.invalid[o], InvalidAt{Policy: p, Node: a.Node, Msg: a.Invalid})
		} else if l := dropFrom(ki.invalid[o], func(x InvalidAt) bool { return x.Policy == p }); len(l) == 0 {
			delete(ki.invalid, o)
		} else {
			ki.invalid[o] = l
		}
	}
	if x.in.OnInvalid != nil {
		x.in.OnInvalid(o, d)
	}
}

// applyAttachment adds (d > 0) or removes p at the attachment node of a,
// bumping the generation the fold memo is checked against.
func (x *Index) applyAttachment(ki *KindIndex, p *semantics.Policy, a semantics.Attachment, o topology.NodeID, d int) {
	x.touch(ki, a.Node)
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
		setmap.AddCount(ki.sections, o, a.Node.Section, d)
	}
}

// PoliciesNaming returns the policies whose named targets include one of
// nodes, plus (when sel is set) the selector policies of sel's namespace,
// sorted.
func (x *Index) PoliciesNaming(nodes []topology.NodeID, sel *topology.NodeID) []*semantics.Policy {
	set := map[*semantics.Policy]bool{}
	for _, n := range nodes {
		for p := range x.byTarget[n.Object()] {
			set[p] = true
		}
	}
	if sel != nil {
		for _, ns := range []string{sel.Namespace, anyNamespace} {
			for p := range x.selPolicies[ns] {
				for _, s := range p.Selectors {
					if s.GK == sel.GK() {
						set[p] = true
					}
				}
			}
		}
	}
	return sortedPolicies(set)
}

// AffectedByNamespace returns, sorted, the policies whose attachments may
// change with the labels of Namespace name: those naming it, and those
// with wide selectors, which pick namespaces by their labels.
func (x *Index) AffectedByNamespace(name string) []*semantics.Policy {
	set := map[*semantics.Policy]bool{}
	for _, p := range x.PoliciesNaming([]topology.NodeID{topology.NamespaceNode(name)}, nil) {
		set[p] = true
	}
	for p := range x.selPolicies[anyNamespace] {
		set[p] = true
	}
	return sortedPolicies(set)
}

// AffectedByGrant returns, sorted, the policies whose attachments may
// change with the ReferenceGrants of namespace ns: those naming a target
// there from another namespace, and those with wide selectors.
func (x *Index) AffectedByGrant(ns string) []*semantics.Policy {
	set := map[*semantics.Policy]bool{}
	for p := range x.crossNS[ns] {
		set[p] = true
	}
	for p := range x.selPolicies[anyNamespace] {
		set[p] = true
	}
	return sortedPolicies(set)
}

// updateSet adds v to the set under k when d > 0, else removes it.
func updateSet[K comparable, V comparable](m map[K]map[V]bool, k K, v V, d int) {
	if d > 0 {
		setmap.Add(m, k, v)
	} else {
		setmap.Remove(m, k, v)
	}
}

// dropFrom removes the elements for which drop holds, in place (the
// indexes own their slices; nothing else holds them).
func dropFrom[T any](l []T, drop func(T) bool) []T {
	out := l[:0]
	for _, x := range l {
		if !drop(x) {
			out = append(out, x)
		}
	}
	return out
}

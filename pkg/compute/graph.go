package compute

// Key sets from walks of the topology graph (topology.Graph owns the graph).

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/attach"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// subtree adds the keys of n's owner and of every node below n, but in
// bulk mode (affected keys are not kept then).
func (st *state) subtree(n topology.NodeID, ks keySet, seen topology.Visited) {
	if st.bulk {
		return
	}
	ks.addBelow(st.graph, n, seen)
}

// addBelow adds the keys of n's owner and of every node below n in g.
func (ks keySet) addBelow(g *topology.Graph, n topology.NodeID, seen topology.Visited) {
	g.Descend(n, true, seen, func(c topology.NodeID) { ks[keyOf(c)] = true })
}

// meshRoots lists, for an attachment n of kind ki at the root Namespace of the kind's profile
// (semantics.MeshRoot), the nodes below which the whole mesh lies: every namespace and every
// cluster-scoped object. It is nil for any other attachment.
func meshRoots(g *topology.Graph, ki *attach.KindIndex, n topology.NodeID) []topology.NodeID {
	if ki == nil || !topology.IsNamespaceNode(n) || semantics.RootNamespaceOf(ki.Kind.Profile, ki.Kind.GK.Kind) != n.Name {
		return nil
	}
	out := make([]topology.NodeID, 0, len(g.ByNS))
	for ns := range g.ByNS {
		out = append(out, topology.NamespaceNode(ns))
	}
	for o := range g.Objects {
		if o.Namespace == "" && !topology.IsNamespaceNode(o) {
			out = append(out, o)
		}
	}
	return out
}

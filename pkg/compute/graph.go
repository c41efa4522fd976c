package compute

// Key sets from walks of the topology graph (topology.Graph owns the graph).

import (
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

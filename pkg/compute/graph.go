package compute

// Key sets from walks of the topology graph (topology.Graph owns the graph).

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// subtree adds the keys of n's owner and of every node below n.
func (st *state) subtree(n topology.NodeID, ks keySet, seen topology.Visited) {
	if st.bulk {
		return
	}
	st.walk(n, ks, seen)
}

func (st *state) walk(n topology.NodeID, ks keySet, seen topology.Visited) {
	st.graph.Descend(n, true, seen, func(c topology.NodeID) { ks[keyOf(c)] = true })
}

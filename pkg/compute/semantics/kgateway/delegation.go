package kgateway

// The merge across a delegation chain, from kgateway v2.2.0:
//
//   - irtranslator/route.go runRoutePlugins: a child route's rule and route policies are at
//     HierarchicalPriority 0, each delegating parent's rule and route policies one lower
//     (-1, -2, ... up the chain);
//   - pluginsdk/policy/merge.go MergePolicies: each priority's policies are merged alone
//     (AugmentedShallowMerge, the first to set a unit keeps it: priorityOrder), then the merged
//     priorities into one, the child's first, each with GetMergeStrategy of its own
//     InheritedPolicyPriority, which is its route's kgateway.dev/inherited-policy-priority
//     (krtcollections/policy.go getInheritedPolicyPriority: ShallowMergePreferChild when
//     absent or not one of the four values);
//   - ShallowMergePreferChild and DeepMergePreferChild (AugmentedShallow, AugmentedDeep) keep
//     a unit the routes below set; ShallowMergePreferParent (OverridableShallow) replaces it
//     with the parent's; DeepMergePreferParent (OverridableDeep) keeps it too for every unit
//     trafficpolicy/merge.go merges with defaultMerge, and for extAuth, extProc and
//     transformation combines both (providers, transformation lists) with the parent's first;
//     that combination is reported as the parent's unit (docs: a doubt).

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// The values of kgateway.dev/inherited-policy-priority (api/annotations/policy.go).
const (
	shallowPreferParent = "ShallowMergePreferParent"
	shallowPreferChild  = "ShallowMergePreferChild"
	deepPreferParent    = "DeepMergePreferParent"
	deepPreferChild     = "DeepMergePreferChild"
)

// deepUnits are the TrafficPolicy units merge.go combines under a deep strategy.
var deepUnits = map[string]bool{"extAuth": true, "extProc": true, "transformation": true}

// parentOverrides reports whether a delegating route with annotation mode replaces unit with
// its own (OverridableShallow; OverridableDeep for the units it combines).
func parentOverrides(mode, unit string) bool {
	switch mode {
	case shallowPreferParent:
		return true
	case deepPreferParent:
		return deepUnits[unit]
	}
	return false // ShallowMergePreferChild (the default, also for an unknown value), DeepMergePreferChild
}

// chainGroup is the route-side entries of one route of a delegation chain.
type chainGroup struct {
	route topology.NodeID
	mode  string
	idx   []int // in priority order
}

// chainGroups splits the route-side entries of order (priority order, the more specific
// level first) by route, the deepest route of the chain first: es lists the nodes of a
// context from the root, so a route reached later is deeper.
func chainGroups(es []semantics.FoldEntry, order []int) (gateway []int, groups []chainGroup) {
	depth := map[topology.NodeID]int{}
	var routes []topology.NodeID
	for i := range es {
		if r := es[i].Node.Object(); topology.IsRouteGK(r.GK()) {
			if _, seen := depth[r]; !seen {
				depth[r] = len(routes)
				routes = append(routes, r)
			}
		}
	}
	groups = make([]chainGroup, len(routes))
	for d, r := range routes {
		groups[len(routes)-1-d].route = r
	}
	for _, i := range order {
		r := es[i].Node.Object()
		d, ok := depth[r]
		if !ok {
			gateway = append(gateway, i)
			continue
		}
		g := &groups[len(routes)-1-d]
		g.idx = append(g.idx, i)
		if m, ok := es[i].NodeAnnotations[topology.InheritedPolicyPriorityAnnotation]; ok && g.mode == "" {
			g.mode = m
		}
	}
	return gateway, groups
}

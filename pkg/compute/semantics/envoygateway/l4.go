package envoygateway

// TCP and UDP routes, from github.com/envoyproxy/gateway v1.9.0 internal/gatewayapi:
//
//   - backendtrafficpolicy.go applyTrafficFeatureToRoute (route and rule policies) and
//     translateBackendTrafficPolicyForListeners (Gateway, Gateway listener, ListenerSet and
//     ListenerSet listener policies) set each setting of an IR TCP route only while it is unset
//     (helpers.go setIfNil), in the processing order route rule, route, ListenerSet listener,
//     ListenerSet, Gateway listener, Gateway. So no policy replaces another whole: each setting
//     comes from the most specific policy that has it. The settings of a TCP route are
//     LoadBalancer, ProxyProtocol, HealthCheck, CircuitBreaker, TCPKeepalive, Timeout, DNS and
//     StatName (telemetry.metrics.routeStatName), plus BackendConnection (spec.connection) from
//     route and rule policies only; of a UDP route LoadBalancer and DNS. Nothing else of a
//     BackendTrafficPolicy reaches an L4 route. TLSRoutes are TCP routes in the IR
//     (route.go processTLSRouteParentRefs).
//   - securitypolicy.go translateSecurityPolicyForRoute (TCPRoute) and
//     translateSecurityPolicyForListeners (x.TCP): of a SecurityPolicy only authorization
//     reaches a TCP route, again set while unset; a route policy with mergeType is merged onto
//     its closest parent first (processSecurityPolicyForRoute), and so is a
//     BackendTrafficPolicy (translateBackendTrafficPolicyForRouteWithMerge).

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// The flavors: the kind and the IR route it becomes; egFlavorPatch that of EnvoyPatchPolicy,
// whose policies all apply.
const (
	egFlavorPatch = "patch"
	flavorBTPTCP  = "btp-tcp"
	flavorBTPUDP  = "btp-udp"
	flavorSPTCP   = "sp-tcp"
)

// slot is one setting of an L4 route: the spec path it is read from, and whether only route and
// rule policies set it.
type slot struct {
	path      []string
	routeOnly bool
}

// flavorSlots are the settings of an L4 route per flavor.
var flavorSlots = map[string][]slot{
	flavorBTPTCP: {
		{path: []string{"loadBalancer"}}, {path: []string{"proxyProtocol"}}, {path: []string{"healthCheck"}},
		{path: []string{"circuitBreaker"}}, {path: []string{"tcpKeepalive"}}, {path: []string{"timeout"}},
		{path: []string{"dns"}}, {path: []string{"telemetry", "metrics", "routeStatName"}},
		{path: []string{"connection"}, routeOnly: true},
	},
	flavorBTPUDP: {{path: []string{"loadBalancer"}}, {path: []string{"dns"}}},
	flavorSPTCP:  {{path: []string{"authorization"}}},
}

// Flavor implements semantics.Profile: the L4 routes (and their rules) of the kinds that reach
// them.
func (Profile) Flavor(kind string, target topology.NodeID) string { return flavorOf(kind, target) }

func flavorOf(kind string, target topology.NodeID) string {
	if kind == patchPolicy {
		return egFlavorPatch
	}
	if !isRoute(target) {
		return ""
	}
	tcp := target.Kind == "TCPRoute" || target.Kind == "TLSRoute"
	switch {
	case kind == "BackendTrafficPolicy" && tcp:
		return flavorBTPTCP
	case kind == "BackendTrafficPolicy" && target.Kind == "UDPRoute":
		return flavorBTPUDP
	case kind == "SecurityPolicy" && tcp:
		return flavorSPTCP
	}
	return ""
}

// slotsOf are the settings of the context's route when it is an L4 one: the target's flavor,
// or for a target below a route (a backend, which has no flavor of its own) the flavor of the
// route whose entry the via holds; nil for HTTP routes, or when the via holds no route.
func slotsOf(es []semantics.FoldEntry, live []int, flavor string) []slot {
	if flavor != "" {
		return flavorSlots[flavor]
	}
	for _, i := range live {
		if isRoute(es[i].Node) {
			return flavorSlots[flavorOf(es[i].Policy.ID.GK.Kind, es[i].Node)]
		}
	}
	return nil
}

// combineSlots takes each setting of slots from the most specific live entry that has it; the
// most specific entry counts as top, its merge with parent included (top, built already). An
// entry's fields outside the settings never survive: they are counted, so that its outcome
// says not all of it is in effect.
func combineSlots(es []semantics.FoldEntry, live []int, top *merge.Value, slots []slot) *merge.Value {
	last := live[len(live)-1]
	acc := &merge.Value{IsObj: true, Obj: map[string]*merge.Value{}, Src: last}
	built := make(map[int]*merge.Value, len(live))
	built[last] = merge.StripNulls(top)
	for _, sl := range slots {
		for j := len(live) - 1; j >= 0; j-- {
			i := live[j]
			if sl.routeOnly && !isRoute(es[i].Node) {
				continue
			}
			v, ok := built[i]
			if !ok {
				v = merge.StripNulls(merge.Build(es[i].Entry.Spec, i, es[i].Entry.Schema))
				built[i] = v
			}
			if at := valueAt(v, sl.path); at != nil {
				setAt(acc, sl.path, at)
				break
			}
		}
	}
	return acc
}

// valueAt is the value at path in v, nil when there is none.
func valueAt(v *merge.Value, path []string) *merge.Value {
	for _, k := range path {
		if v == nil || !v.IsObj {
			return nil
		}
		v = v.Obj[k]
	}
	return v
}

// setAt puts val at path in acc, making the objects on the way (named after val's entry).
func setAt(acc *merge.Value, path []string, val *merge.Value) {
	for _, k := range path[:len(path)-1] {
		next := acc.Obj[k]
		if next == nil {
			next = &merge.Value{IsObj: true, Obj: map[string]*merge.Value{}, Src: val.Src}
			acc.Obj[k] = next
		}
		acc = next
	}
	acc.Obj[path[len(path)-1]] = val
}

// spHTTPOnly are the SecurityPolicy fields Envoy Gateway refuses on a TCPRoute target
// (securitypolicy.go validateSecurityPolicyForTCP: "only authorization is supported for TCP").
var spHTTPOnly = []string{"cors", "csrf", "jwt", "oidc", "apiKeyAuth", "basicAuth", "extAuth"}

// invalidOnTCPRoute marks the entries of SecurityPolicies attached to a TCPRoute (or one of its
// rules) that set an HTTP-only field: Envoy Gateway validates a policy against its TCPRoute
// target before anything else (processSecurityPolicyForRoute picks
// validateSecurityPolicyForTCP when the target's kind is TCPRoute) and, when that fails,
// reports it Invalid there and applies none of it, its authorization included, so the route
// keeps what its listeners' and Gateways' policies give it. A Gateway policy with such fields
// still gives TCP routes its authorization (translateSecurityPolicyForListeners validates
// nothing per route). nil when no entry is such.
func invalidOnTCPRoute(es []semantics.FoldEntry) []bool {
	var apart []bool
	for i, e := range es {
		if e.Node.Group != topology.GatewayGroup || e.Node.Kind != "TCPRoute" {
			continue
		}
		for _, f := range spHTTPOnly {
			if _, ok := e.Entry.Spec[f]; ok {
				if apart == nil {
					apart = make([]bool, len(es))
				}
				apart[i] = true
				break
			}
		}
	}
	return apart
}

// onTLSRouteRule marks the entries attached to a rule of a TLSRoute: Envoy Gateway builds a
// TLSRoute's IR route without the rule's name (route.go processTLSRouteParentRefs:
// buildResourceMetadata(tlsRoute, nil)), and applyTrafficFeatureToRoute applies a policy
// naming a rule only to IR routes whose metadata carries that name, so such a policy
// applies nowhere: the route keeps what its route-wide, listener and Gateway policies give it
// (its status still says Accepted, and the Gateway's policy Overridden for the route).
// nil when no entry is such.
func onTLSRouteRule(es []semantics.FoldEntry) []bool {
	var apart []bool
	for i, e := range es {
		if e.Node.Group == topology.GatewayGroup && e.Node.Kind == "TLSRoute" && e.Node.Section != "" {
			if apart == nil {
				apart = make([]bool, len(es))
			}
			apart[i] = true
		}
	}
	return apart
}

// mergedInvalidOnTCPRoute says whether the most specific live entry is a TCPRoute policy with
// mergeType whose merge parent has an HTTP-only field: Envoy Gateway validates the merged
// policy against the TCPRoute (processSecurityPolicyForRoute, the mergeType branch), so the
// parent's HTTP-only fields make it Invalid there and nothing of it applies.
func mergedInvalidOnTCPRoute(es []semantics.FoldEntry, live []int) bool {
	last := es[live[len(live)-1]]
	if last.Node.Group != topology.GatewayGroup || last.Node.Kind != "TCPRoute" {
		return false
	}
	parent := mergeParent(es, live)
	if parent < 0 {
		return false
	}
	for _, f := range spHTTPOnly {
		if _, ok := es[parent].Entry.Spec[f]; ok {
			return true
		}
	}
	return false
}

// markApart sets apart[i], making apart when it is nil.
func markApart(apart []bool, n, i int) []bool {
	if apart == nil {
		apart = make([]bool, n)
	}
	apart[i] = true
	return apart
}

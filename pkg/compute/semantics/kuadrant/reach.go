package kuadrant

// Where each Kuadrant kind takes effect, from kuadrant-operator v1.5.2 (policy-machinery v0.8.0):
//
//   - the CRD validation of spec.targetRef (a single reference; Kuadrant has no targetRefs):
//     RateLimitPolicy and AuthPolicy accept Gateway, HTTPRoute and GRPCRoute
//     (api/v1/ratelimitpolicy_types.go, api/v1/authpolicy_types.go), TokenRateLimitPolicy
//     Gateway and HTTPRoute (api/v1alpha1/tokenratelimitpolicy_types.go), DNSPolicy and
//     TLSPolicy only Gateway, a listener by sectionName (api/v1/dnspolicy_types.go,
//     api/v1/tlspolicy_types.go);
//   - the reconcilers that compute what is enforced walk only the paths from a GatewayClass to
//     a route rule (targetables.Paths(gatewayClass, routeRule)): HTTPRouteRule and
//     GRPCRouteRule for RateLimitPolicy and AuthPolicy
//     (internal/controller/effective_ratelimit_policies_reconciler.go and
//     effective_auth_policies_reconciler.go, calculateEffectivePolicies), HTTPRouteRule alone
//     for TokenRateLimitPolicy (effective_tokenratelimit_policies_reconciler.go,
//     calculateEffectivePolicies). No path goes on to a backend: the operator watches no
//     Service (internal/controller/state_of_the_world.go getGatewayAPIOptions watches
//     GatewayClasses, Gateways, HTTPRoutes and GRPCRoutes only), so its topology has none;
//     nor does it hold TLSRoutes, TCPRoutes, UDPRoutes or ListenerSets (policy-machinery
//     controller/topology_builder.go Build adds HTTPRoutes and GRPCRoutes only).
//
// So a Gateway-level policy of these kinds has no effective entry on a backend Service, a
// TLSRoute or a ListenerSet, and a TokenRateLimitPolicy none on a GRPCRoute either.

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// reachedKinds are, per Kuadrant policy kind, the kinds of gateway.networking.k8s.io objects
// (and their sections: listeners, route rules) where Kuadrant applies it.
var reachedKinds = map[string]map[string]bool{
	"RateLimitPolicy":      {"Gateway": true, "HTTPRoute": true, "GRPCRoute": true},
	"AuthPolicy":           {"Gateway": true, "HTTPRoute": true, "GRPCRoute": true},
	"TokenRateLimitPolicy": {"Gateway": true, "HTTPRoute": true},
	"DNSPolicy":            {"Gateway": true},
	"TLSPolicy":            {"Gateway": true},
}

// Reaches implements semantics.Profile. A kind the table does not know (a descriptor that
// names the Kuadrant semantics for a kind of its own) reaches everywhere, as in the GEP fold.
func (Profile) Reaches(kind string, target topology.NodeID) bool {
	kinds, ok := reachedKinds[kind]
	if !ok {
		return true
	}
	return target.Group == topology.GatewayGroup && kinds[target.Kind]
}

// LimitsReach implements semantics.ReachLimiter.
func (Profile) LimitsReach(kind string) bool {
	_, ok := reachedKinds[kind]
	return ok
}

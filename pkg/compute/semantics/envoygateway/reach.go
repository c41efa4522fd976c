package envoygateway

// Where each Envoy Gateway kind takes effect, from github.com/envoyproxy/gateway v1.9.0:
//
//   - the CRD validation of targetRef(s) and targetSelectors (group gateway.networking.k8s.io
//     only): BackendTrafficPolicy and EnvoyExtensionPolicy accept Gateway, ListenerSet,
//     HTTPRoute, GRPCRoute, UDPRoute, TCPRoute, TLSRoute (api/v1alpha1/backendtrafficpolicy_types.go,
//     envoyextensionypolicy_types.go); SecurityPolicy Gateway, ListenerSet, HTTPRoute,
//     GRPCRoute, TCPRoute (securitypolicy_types.go); ClientTrafficPolicy Gateway and ListenerSet
//     (clienttrafficpolicy_types.go).
//   - what the translator writes to the IR (internal/gatewayapi): a BackendTrafficPolicy reaches
//     HTTP, TCP and UDP routes (backendtrafficpolicy.go applyTrafficFeatureToRoute,
//     translateBackendTrafficPolicyForListeners); a SecurityPolicy HTTP routes and, with
//     authorization only, TCP routes, which TLSRoutes are too (securitypolicy.go
//     translateSecurityPolicyForRoute, translateSecurityPolicyForListeners: nothing for x.UDP);
//     an EnvoyExtensionPolicy HTTP routes only (envoyextensionpolicy.go
//     translateEnvoyExtensionPolicyForRoute and ...ForListeners read GetHTTPListener / x.HTTP:
//     its TCPRoute, UDPRoute and TLSRoute targets are accepted and have no effect).
//   - the ListenerSets are gateway.networking.k8s.io/v1 ListenerSets: the provider watches
//     gwapiv1.ListenerSet (internal/provider/kubernetes/controller.go), never an XListenerSet,
//     nor any route of gateway.networking.x-k8s.io.
//
// A backend below a route is reached where the route is: the route's settings are what its
// requests to that backend get.

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// reachedRoutes are, per Envoy Gateway policy kind, the route kinds (and their rules) where it
// takes effect; every kind takes effect on Gateways and ListenerSets and their listeners.
var reachedRoutes = map[string]map[string]bool{
	"BackendTrafficPolicy": {"HTTPRoute": true, "GRPCRoute": true, "TCPRoute": true, "UDPRoute": true, "TLSRoute": true},
	"SecurityPolicy":       {"HTTPRoute": true, "GRPCRoute": true, "TCPRoute": true, "TLSRoute": true},
	"EnvoyExtensionPolicy": {"HTTPRoute": true, "GRPCRoute": true},
	"ClientTrafficPolicy":  {},
	patchPolicy:            {},
}

// Reaches implements semantics.Profile. A kind the table does not know (a descriptor of a user's
// naming the Envoy Gateway semantics) reaches everywhere, as in the GEP fold.
func (Profile) Reaches(kind string, target topology.NodeID) bool {
	routes, ok := reachedRoutes[kind]
	switch gk := target.GK(); {
	case !ok:
		return true
	case kind == patchPolicy: // patchpolicy.go: Gateways only
		return target.Group == topology.GatewayGroup && target.Kind == "Gateway"
	case gatewaySide(target):
		return true
	case topology.IsTopologyGK(gk) && (gk.Group == topology.GatewayGroup || gk.Group == topology.ExperimentalGroup):
		return target.Group == topology.GatewayGroup && routes[target.Kind]
	}
	// A backend (or a Namespace): below the routes the kind reaches.
	return kind != "ClientTrafficPolicy"
}

// LimitsReach implements semantics.ReachLimiter.
func (Profile) LimitsReach(kind string) bool {
	_, ok := reachedRoutes[kind]
	return ok
}

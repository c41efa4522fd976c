package nginx

// Where each NGINX Gateway Fabric kind takes effect, from nginx-gateway-fabric v2.6.7:
//
//   - internal/controller/state/graph/policies.go processPolicies keeps only targetRefs of
//     gateway.networking.k8s.io Gateway, HTTPRoute and GRPCRoute and of core Service
//     (refGroupKind); attachPolicies attaches to those alone, L7 routes only (TLSRoute, TCPRoute
//     and UDPRoute are stream servers no policy is written into);
//   - the CRDs' CEL rules on targetRefs and the validators narrow that per kind: ClientSettingsPolicy,
//     ProxySettingsPolicy, RateLimitPolicy and WAFPolicy take a Gateway, HTTPRoute or GRPCRoute;
//     SnippetsPolicy a Gateway; ObservabilityPolicy an HTTPRoute or GRPCRoute
//     (policies/observability/validator.go); UpstreamSettingsPolicy a Service;
//   - the generators (internal/controller/nginx/config/policies/*/generator.go) write a Gateway's
//     policies into the http block or every server of the Gateway's NGINX, ListenerSet listeners'
//     servers included (dataplane/configuration.go buildServers), and a route's into the route's
//     locations; only UpstreamSettingsPolicy writes into an upstream (upstreamsettings/processor.go).
//
// So an inherited kind's Gateway policy reaches the Gateway, its listeners, its ListenerSets and its
// HTTPRoutes and GRPCRoutes (and their rules), never a backend Service; a Direct kind reaches the
// kinds it may target.

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// gatewayAndRoutes are the gateway.networking.k8s.io kinds whose NGINX blocks (http, server,
// location) a Gateway-level or route-level policy configures.
var gatewayAndRoutes = map[string]bool{"Gateway": true, "ListenerSet": true, "HTTPRoute": true, "GRPCRoute": true}

// reachedKinds are, per NGINX Gateway Fabric policy kind, the kinds of gateway.networking.k8s.io
// objects (and their sections) where it takes effect; UpstreamSettingsPolicy is apart (Services).
var reachedKinds = map[string]map[string]bool{
	"ClientSettingsPolicy": gatewayAndRoutes,
	"ProxySettingsPolicy":  gatewayAndRoutes,
	"RateLimitPolicy":      gatewayAndRoutes,
	"SnippetsPolicy":       gatewayAndRoutes,
	"WAFPolicy":            gatewayAndRoutes,
	"ObservabilityPolicy":  {"HTTPRoute": true, "GRPCRoute": true},
}

// Reaches implements semantics.Profile. A kind the profile does not know (a descriptor of one's
// own that names the NGINXGatewayFabric semantics) reaches everywhere, as in the GEP fold.
func (Profile) Reaches(kind string, target topology.NodeID) bool {
	if kind == "UpstreamSettingsPolicy" {
		return target.Group == "" && target.Kind == "Service"
	}
	kinds, ok := reachedKinds[kind]
	if !ok {
		return true
	}
	return target.Group == topology.GatewayGroup && kinds[target.Kind]
}

// LimitsReach implements semantics.ReachLimiter.
func (Profile) LimitsReach(kind string) bool {
	_, ok := reachedKinds[kind]
	return ok || kind == "UpstreamSettingsPolicy"
}

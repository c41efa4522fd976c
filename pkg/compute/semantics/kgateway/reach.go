package kgateway

// Where each kgateway kind takes effect, from kgateway v2.2.0:
//
//   - TrafficPolicy: a Gateway's, a listener's or a ListenerSet's goes into the route
//     configuration of the listener (irtranslator/route.go ComputeRouteConfiguration), which
//     serves every HTTPRoute and GRPCRoute of the listener (krtcollections/grpc_route.go turns
//     GRPCRoutes into the same route IR); a route's or a rule's into its routes. TCPRoutes and
//     TLSRoutes get a TCP proxy, no HTTP filter, and backends no TrafficPolicy field.
//   - ListenerPolicy and HTTPListenerPolicy: into the Envoy listeners of the Gateway's ports
//     (listenerpolicy/listener_plugin.go ApplyListenerPlugin), so a Gateway and its listeners.
//   - BackendConfigPolicy: into the cluster of the Service or Backend it targets
//     (backendconfigpolicy/plugin.go processBackend).

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// reachedKinds are, per kgateway policy kind, the group/kinds of the objects (and their
// sections) where it takes effect.
var reachedKinds = map[string]map[[2]string]bool{
	"TrafficPolicy": {
		{topology.GatewayGroup, "Gateway"}: true, {topology.ExperimentalGroup, "XListenerSet"}: true,
		{topology.GatewayGroup, "HTTPRoute"}: true, {topology.GatewayGroup, "GRPCRoute"}: true,
	},
	"ListenerPolicy":      {{topology.GatewayGroup, "Gateway"}: true},
	"HTTPListenerPolicy":  {{topology.GatewayGroup, "Gateway"}: true},
	"BackendConfigPolicy": {{"", "Service"}: true, {group, "Backend"}: true},
}

// Reaches implements semantics.Profile. A kind the table does not know (a descriptor of one's
// own that names the kgateway semantics) reaches everywhere, as in the GEP fold.
func (Profile) Reaches(kind string, target topology.NodeID) bool {
	kinds, ok := reachedKinds[kind]
	if !ok {
		return true
	}
	return kinds[[2]string{target.Group, target.Kind}]
}

// LimitsReach implements semantics.ReachLimiter.
func (Profile) LimitsReach(kind string) bool {
	_, ok := reachedKinds[kind]
	return ok
}

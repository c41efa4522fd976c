// Package requestmatch answers "what would the Gateway do with request X":
// which listener of a Gateway takes the request, which route attached to that
// listener and which rule of it serves the request, and which backends the
// rule sends it to. It is the matching half of the RequestTrace API
// (docs/spec.md §9) and follows the Gateway API specification (v1.6):
//
//   - listeners by port and hostname (exact over wildcard over none, longer
//     wildcards first); TLS listeners by SNI; TCP and UDP listeners by port;
//   - HTTPRoute and GRPCRoute by hostname intersection, then the rule
//     precedence of apis/v1/httproute_types.go and apis/v1/grpcroute_types.go;
//   - TLSRoute by SNI hostname; TCPRoute and UDPRoute: the oldest route.
//
// Hostname precedence is applied as the specification words it: one order
// over every match of every route that serves the host, so when the rules of
// the most specific route do not match, a less specific route's may. A
// listener with VirtualHosts set is matched as Envoy Gateway, Istio and
// NGINX Gateway Fabric do it instead: the request is bound to the most
// specific hostname and answers 404 there
// (docs/research/hostname-fallthrough.md).
//
// The package is pure: it reads its inputs and returns a Result, never
// panics and never fails with an error — an input it cannot use (a bad
// regular expression, an unknown match type) makes that match fail, and the
// Result's Reason and Message say why nothing matched.
//
// Left to the caller: route attachment. Each Listener carries the routes
// already attached to it (parentRefs, sectionName/port, allowedRoutes,
// hostname intersection at attachment time, HTTPRoute/GRPCRoute hostname
// conflicts, ReferenceGrants). Route hostnames that do not intersect the
// listener's hostname are still ignored here, as the specification requires
// for matching. Backend resolution (does the Service exist, is the
// cross-namespace reference granted) is also the caller's job: backends are
// returned as the rule names them, with defaults filled in.
//
// Inputs are small copies of the Gateway API types with the same JSON field
// names (the gateway-api module is not a dependency: adding it would move
// k8s.io modules this project pins).
package requestmatch

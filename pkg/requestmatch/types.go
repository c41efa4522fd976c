package requestmatch

import "time"

// Protocol is a listener protocol (Gateway API ProtocolType).
type Protocol string

// The protocols of the Gateway API core and extended conformance.
const (
	ProtocolHTTP  Protocol = "HTTP"
	ProtocolHTTPS Protocol = "HTTPS"
	ProtocolTLS   Protocol = "TLS"
	ProtocolTCP   Protocol = "TCP"
	ProtocolUDP   Protocol = "UDP"
)

// RouteKind names the kind of a route.
type RouteKind string

// The route kinds this package matches.
const (
	KindHTTPRoute RouteKind = "HTTPRoute"
	KindGRPCRoute RouteKind = "GRPCRoute"
	KindTLSRoute  RouteKind = "TLSRoute"
	KindTCPRoute  RouteKind = "TCPRoute"
	KindUDPRoute  RouteKind = "UDPRoute"
)

// Gateway is the part of a Gateway that request matching reads.
type Gateway struct {
	Namespace string     `json:"namespace,omitempty"`
	Name      string     `json:"name,omitempty"`
	Listeners []Listener `json:"listeners,omitempty"`
}

// Listener is one Gateway (or ListenerSet) listener together with the routes
// the caller found attached to it.
type Listener struct {
	Name     string   `json:"name"`
	Port     int32    `json:"port"`
	Protocol Protocol `json:"protocol"`
	// Hostname is the listener's hostname; "" accepts every host.
	Hostname string `json:"hostname,omitempty"`
	// Routes are the routes attached to this listener (attachment is the
	// caller's job). Their order does not matter: precedence does.
	Routes []Route `json:"routes,omitempty"`
	// VirtualHosts: the data plane builds one virtual host per hostname
	// (route hostname intersected with the listener's) and binds a request
	// to the most specific one any route serves; only the rules of routes
	// with that hostname are tried, so a request they do not match gets a
	// 404 rather than a less specific route's rule. Envoy Gateway, Istio
	// and NGINX Gateway Fabric do this (docs/research/hostname-fallthrough.md);
	// false is the specification's wording: one precedence order over the
	// rules of every route that serves the host.
	VirtualHosts bool `json:"virtualHosts,omitempty"`
}

// Route is an HTTPRoute, GRPCRoute, TLSRoute, TCPRoute or UDPRoute, reduced
// to what matching reads. Kind says which fields of the rules are read.
type Route struct {
	Kind      RouteKind `json:"kind"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	// CreationTimestamp breaks ties between routes: the oldest wins.
	CreationTimestamp time.Time `json:"creationTimestamp,omitempty"`
	// Hostnames of an HTTPRoute, GRPCRoute or TLSRoute; none matches every host.
	Hostnames []string `json:"hostnames,omitempty"`
	Rules     []Rule   `json:"rules,omitempty"`
}

// Rule is one entry of a route's spec.rules.
type Rule struct {
	Name string `json:"name,omitempty"`
	// Matches of an HTTPRoute rule; none means PathPrefix "/".
	Matches []HTTPRouteMatch `json:"matches,omitempty"`
	// GRPCMatches of a GRPCRoute rule; none matches every call.
	GRPCMatches []GRPCRouteMatch `json:"grpcMatches,omitempty"`
	BackendRefs []BackendRef     `json:"backendRefs,omitempty"`
}

// PathMatchType is the Gateway API PathMatchType.
type PathMatchType string

// Path match types; "" means PathPrefix, as the API defaults it.
const (
	PathMatchExact             PathMatchType = "Exact"
	PathMatchPathPrefix        PathMatchType = "PathPrefix"
	PathMatchRegularExpression PathMatchType = "RegularExpression"
)

// MatchType is the type of a header, query parameter or gRPC method match.
type MatchType string

// Value match types; "" means Exact, as the API defaults it.
const (
	MatchExact             MatchType = "Exact"
	MatchRegularExpression MatchType = "RegularExpression"
)

// HTTPPathMatch is the Gateway API HTTPPathMatch.
type HTTPPathMatch struct {
	Type  PathMatchType `json:"type,omitempty"`
	Value string        `json:"value,omitempty"`
}

// HeaderMatch is an HTTP header or gRPC metadata match (names are
// case-insensitive).
type HeaderMatch struct {
	Type  MatchType `json:"type,omitempty"`
	Name  string    `json:"name"`
	Value string    `json:"value"`
}

// QueryParamMatch is an HTTP query parameter match (names are case-sensitive).
type QueryParamMatch struct {
	Type  MatchType `json:"type,omitempty"`
	Name  string    `json:"name"`
	Value string    `json:"value"`
}

// HTTPRouteMatch is the Gateway API HTTPRouteMatch: all its parts must hold.
type HTTPRouteMatch struct {
	Path        *HTTPPathMatch    `json:"path,omitempty"`
	Headers     []HeaderMatch     `json:"headers,omitempty"`
	QueryParams []QueryParamMatch `json:"queryParams,omitempty"`
	// Method is an HTTP method in upper case; "" matches every method.
	Method string `json:"method,omitempty"`
}

// GRPCMethodMatch is the Gateway API GRPCMethodMatch; an empty Service or
// Method matches any.
type GRPCMethodMatch struct {
	Type    MatchType `json:"type,omitempty"`
	Service string    `json:"service,omitempty"`
	Method  string    `json:"method,omitempty"`
}

// GRPCRouteMatch is the Gateway API GRPCRouteMatch.
type GRPCRouteMatch struct {
	Method  *GRPCMethodMatch `json:"method,omitempty"`
	Headers []HeaderMatch    `json:"headers,omitempty"`
}

// BackendRef is a rule's backendRef as written; see Backend for the defaults.
type BackendRef struct {
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Port      *int32 `json:"port,omitempty"`
	Weight    *int32 `json:"weight,omitempty"`
}

// Request is the request to trace. Every field is optional.
type Request struct {
	// Host is the Host header (HTTP) or the SNI (TLS). A port suffix and a
	// trailing dot are ignored, case too.
	Host string `json:"host,omitempty"`
	// Port selects listeners by port; 0 means every port.
	Port int32 `json:"port,omitempty"`
	// Protocol selects listeners by protocol; "" means every protocol.
	Protocol Protocol `json:"protocol,omitempty"`
	// Method is compared case-sensitively, as HTTP methods are; "" is a
	// GET (a POST for a gRPC call).
	Method string `json:"method,omitempty"`
	// Path may carry a query string ("/a?b=c"); it adds to QueryParams.
	// For a gRPC call it is "/package.Service/Method".
	Path string `json:"path,omitempty"`
	// Headers by name (any case); gRPC metadata for a gRPC call.
	Headers     map[string]string `json:"headers,omitempty"`
	QueryParams map[string]string `json:"queryParams,omitempty"`
	// GRPC marks a gRPC call: GRPCRoutes are matched first, by the service
	// and method in Path.
	GRPC bool `json:"grpc,omitempty"`
}

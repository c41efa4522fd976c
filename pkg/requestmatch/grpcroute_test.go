package requestmatch

import "testing"

const (
	grpcV1   = "grpc-infra-backend-v1"
	grpcV2   = "grpc-infra-backend-v2"
	echoSvc  = "gateway_api_conformance.echo_basic.grpcecho.GrpcEcho"
	echoPath = "/" + echoSvc + "/"
)

func grpcRoute(name string, age int, hosts []string, rules ...Rule) Route {
	return route(KindGRPCRoute, name, age, hosts, rules...)
}

func grpcMethod(service, method string) GRPCRouteMatch {
	return GRPCRouteMatch{Method: &GRPCMethodMatch{Service: service, Method: method}}
}

// Source: conformance/tests/grpcroute-exact-method-matching.go and
// grpcroute-exact-method-matching.yaml (EchoThree has no rule: Unimplemented).
func TestGRPCRouteExactMethodMatching(t *testing.T) {
	gw := oneListener(grpcRoute("exact-matching", 0, nil,
		grpcRule(grpcV1, grpcMethod(echoSvc, "Echo")),
		grpcRule(grpcV2, grpcMethod(echoSvc, "EchoTwo")),
	))
	runCases(t, gw, []tcase{
		{name: "Echo", req: Request{GRPC: true, Path: echoPath + "Echo"}, backend: grpcV1},
		{name: "EchoTwo", req: Request{GRPC: true, Path: echoPath + "EchoTwo"}, backend: grpcV2},
		{name: "EchoThree", req: Request{GRPC: true, Path: echoPath + "EchoThree"}, reason: ReasonNoRuleMatches},
		// Near miss: method names are exact and case-sensitive.
		{name: "echo", req: Request{GRPC: true, Path: echoPath + "echo"}, reason: ReasonNoRuleMatches},
		// A plain HTTP request is not matched against GRPCRoutes.
		{name: "not gRPC", req: Request{Path: echoPath + "Echo"}, reason: ReasonNoRoutes},
	})
}

// Source: conformance/tests/grpcroute-header-matching.go and
// grpcroute-header-matching.yaml (the same rules as the HTTP header test,
// sent as gRPC metadata).
func TestGRPCRouteHeaderMatching(t *testing.T) {
	h := func(ms ...HeaderMatch) GRPCRouteMatch { return GRPCRouteMatch{Headers: ms} }
	gw := oneListener(grpcRoute("grpc-header-matching", 0, nil,
		grpcRule(grpcV1, h(hdr("version", "one"))),
		grpcRule(grpcV2, h(hdr("version", "two"))),
		grpcRule(grpcV1, h(hdr("version", "two"), hdr("color", "orange"))),
		grpcRule(grpcV1, h(hdr("color", "blue")), h(hdr("color", "green"))),
		grpcRule(grpcV2, h(hdr("color", "red")), h(hdr("color", "yellow"))),
	))
	md := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	call := func(kv ...string) Request { return Request{GRPC: true, Path: echoPath + "Echo", Headers: md(kv...)} }
	runCases(t, gw, []tcase{
		{name: "version one", req: call("Version", "one"), backend: grpcV1},
		{name: "version two", req: call("Version", "two"), backend: grpcV2},
		{name: "version two color orange", req: call("Version", "two", "Color", "orange"), backend: grpcV1},
		{name: "version two color blue (tie, first rule)", req: call("Version", "two", "Color", "blue"), backend: grpcV2, route: "grpc-header-matching", rule: 1},
		{name: "color orange", req: call("Color", "orange"), reason: ReasonNoRuleMatches},
		{name: "other header", req: call("Some-Other-Header", "one"), reason: ReasonNoRuleMatches},
		{name: "color blue", req: call("Color", "blue"), backend: grpcV1},
		{name: "color green", req: call("Color", "green"), backend: grpcV1},
		{name: "color red", req: call("Color", "red"), backend: grpcV2},
		{name: "color yellow", req: call("Color", "yellow"), backend: grpcV2},
		{name: "color purple", req: call("Color", "purple"), reason: ReasonNoRuleMatches},
	})
}

// Source: GRPCRouteRule.Matches in apis/v1/grpcroute_types.go: hostname,
// then characters in a matching service, then in a matching method, then
// header matches, then the oldest route, namespace/name, first rule; an
// empty service or method matches any (GRPCMethodMatch).
func TestGRPCRoutePrecedence(t *testing.T) {
	re := func(service, method string) GRPCRouteMatch {
		return GRPCRouteMatch{Method: &GRPCMethodMatch{Type: MatchRegularExpression, Service: service, Method: method}}
	}
	gw := oneListener(
		grpcRoute("any-service", 0, nil, grpcRule("method-only", grpcMethod("", "Echo"))),
		grpcRoute("service", 1, nil, grpcRule("service-and-method", grpcMethod(echoSvc, "Echo")), grpcRule("service-only", grpcMethod(echoSvc, ""))),
		grpcRoute("regex", 2, nil, grpcRule("regex", re(`.*\.GrpcEcho`, "Echo.*"))),
		grpcRoute("catch-all", 3, nil, Rule{BackendRefs: []BackendRef{{Name: "catch-all"}}}),
		grpcRoute("host", 4, []string{"grpc.example.com"}, grpcRule("host", grpcMethod("", "Echo"))),
	)
	runCases(t, gw, []tcase{
		{name: "service and method beat method only", req: Request{GRPC: true, Path: echoPath + "Echo"}, backend: "service-and-method"},
		{name: "service only", req: Request{GRPC: true, Path: echoPath + "Other"}, backend: "service-only"},
		{name: "method only", req: Request{GRPC: true, Path: "/other.Svc/Echo"}, backend: "method-only"},
		{name: "regex", req: Request{GRPC: true, Path: "/x.GrpcEcho/EchoTwo"}, backend: "regex"},
		{name: "rule without matches", req: Request{GRPC: true, Path: "/x.Y/Z"}, backend: "catch-all"},
		{name: "hostname first", req: Request{GRPC: true, Host: "grpc.example.com", Path: echoPath + "Echo"}, backend: "host"},
	})
}

// A gRPC call whose host no GRPCRoute serves goes to the HTTPRoutes (the
// Gateway API lets only one of the two kinds serve a hostname on a listener).
func TestGRPCFallsBackToHTTPRoute(t *testing.T) {
	gw := oneListener(
		grpcRoute("grpc", 0, []string{"grpc.example.com"}, grpcRule("grpc")),
		httpRoute("http", 0, []string{"web.example.com"}, rule("http", HTTPRouteMatch{Method: "POST", Path: prefix("/" + echoSvc)})),
	)
	runCases(t, gw, []tcase{
		{name: "grpc host", req: Request{GRPC: true, Host: "grpc.example.com", Path: echoPath + "Echo"}, backend: "grpc"},
		{name: "http host sees a POST", req: Request{GRPC: true, Host: "web.example.com", Path: echoPath + "Echo"}, backend: "http"},
		{name: "neither", req: Request{GRPC: true, Host: "x.example.com", Path: echoPath + "Echo"}, reason: ReasonNoRouteForHost},
	})
}

package requestmatch

import "testing"

// Source: Envoy Gateway internal/xds/translator/testdata/in/xds-ir/http-route-multiple-matches.yaml
// and out/xds-ir/http-route-multiple-matches.routes.yaml (envoyproxy/gateway d32f282942): one
// listener with routes for example.com, example.net, *.com, *.net and any host becomes one
// Envoy virtual host per hostname, each holding only its own hostname's routes. A request is
// bound to the most specific virtual host for its Host; when none of that host's routes matches,
// Envoy answers 404 (no fall-through to *.com or *). The same topology without virtual hosts
// (the specification's wording) falls through.
func TestVirtualHosts(t *testing.T) {
	routes := []Route{
		httpRoute("httproute-2", 0, []string{"example.com"}, rule("first-route-dest", HTTPRouteMatch{Path: prefix("/v1/example"), QueryParams: []QueryParamMatch{qp("debug", "yes")}})),
		httpRoute("httproute-3", 1, []string{"example.com"}, rule("second-route-dest", HTTPRouteMatch{Path: prefix("/v1/example")})),
		httpRoute("httproute-4", 2, []string{"example.net"}, rule("third-route-dest", HTTPRouteMatch{Path: prefix("/v1/status"), Headers: []HeaderMatch{hdr("version", "one")}})),
		httpRoute("httproute-5", 3, []string{"example.net"}, rule("fourth-route-dest", HTTPRouteMatch{Path: prefix("/v1/status")})),
		httpRoute("httproute-1", 4, []string{"*.com", "*.net"}, rule("fifth-route-dest", HTTPRouteMatch{Path: prefix("/foo")})),
		httpRoute("catch-all", 5, nil, rule("seventh-route-dest", HTTPRouteMatch{Path: prefix("/")})),
	}
	gw := oneListener(routes...)
	vh := oneListener(routes...)
	vh.Listeners[0].VirtualHosts = true
	both := []tcase{
		{name: "example.com /v1/example?debug=yes", req: Request{Host: "example.com", Path: "/v1/example?debug=yes"}, backend: "first-route-dest"},
		{name: "example.com /v1/example", req: Request{Host: "example.com", Path: "/v1/example"}, backend: "second-route-dest"},
		{name: "example.net /v1/status version one", req: Request{Host: "example.net", Path: "/v1/status", Headers: map[string]string{"version": "one"}}, backend: "third-route-dest"},
		{name: "example.net /v1/status", req: Request{Host: "example.net", Path: "/v1/status"}, backend: "fourth-route-dest"},
		{name: "foo.com /foo", req: Request{Host: "foo.com", Path: "/foo"}, backend: "fifth-route-dest"},
		{name: "other.org /bar: only the any-host routes", req: Request{Host: "other.org", Path: "/bar"}, backend: "seventh-route-dest"},
	}
	runCases(t, gw, append(both,
		tcase{name: "example.com /foo falls through to *.com", req: Request{Host: "example.com", Path: "/foo"}, backend: "fifth-route-dest"},
		tcase{name: "example.com /other falls through to any host", req: Request{Host: "example.com", Path: "/other"}, backend: "seventh-route-dest"},
		tcase{name: "foo.com /bar falls through to any host", req: Request{Host: "foo.com", Path: "/bar"}, backend: "seventh-route-dest"},
	))
	runCases(t, vh, append(both,
		tcase{name: "example.com /foo: 404 in example.com's virtual host", req: Request{Host: "example.com", Path: "/foo"}, reason: ReasonNoRuleMatches},
		tcase{name: "example.com /other: 404", req: Request{Host: "example.com", Path: "/other"}, reason: ReasonNoRuleMatches},
		tcase{name: "foo.com /bar: 404 in *.com's virtual host", req: Request{Host: "foo.com", Path: "/bar"}, reason: ReasonNoRuleMatches},
	))
}

// Source: conformance/tests/httproute-matching-across-routes.go (sigs.k8s.io/gateway-api v1.6.3):
// routes sharing a hostname share its virtual host, so precedence across them holds with
// virtual hosts too (Envoy Gateway passes this test).
func TestVirtualHostsAcrossRoutes(t *testing.T) {
	gw := oneListener(
		httpRoute("matching-part1", 0, []string{"example.com", "example.net"},
			rule(v1, HTTPRouteMatch{Path: prefix("/")}, HTTPRouteMatch{Headers: []HeaderMatch{hdr("version", "one")}})),
		httpRoute("matching-part2", 1, []string{"example.com"},
			rule(v2, HTTPRouteMatch{Path: prefix("/v2")}, HTTPRouteMatch{Headers: []HeaderMatch{hdr("version", "two")}})),
	)
	gw.Listeners[0].VirtualHosts = true
	runCases(t, gw, []tcase{
		{name: "example.com /", req: Request{Host: "example.com", Path: "/"}, backend: v1},
		{name: "example.com /v2", req: Request{Host: "example.com", Path: "/v2"}, backend: v2, route: "matching-part2", rule: 0},
		{name: "example.net /v2", req: Request{Host: "example.net", Path: "/v2"}, backend: v1, route: "matching-part1", rule: 0},
		{name: "example.com / version two", req: Request{Host: "example.com", Path: "/", Headers: map[string]string{"Version": "two"}}, backend: v2},
	})
}

// The virtual host is keyed by the route hostname intersected with the listener's
// (Envoy Gateway internal/gatewayapi/helpers.go computeHosts): on a listener for
// foo.example.com, routes for foo.example.com and *.example.com share one virtual host, and a
// request the first does not match reaches the second.
func TestVirtualHostsListenerHostname(t *testing.T) {
	gw := Gateway{Namespace: ns, Name: "gw", Listeners: []Listener{{
		Name: "foo", Port: 80, Protocol: ProtocolHTTP, Hostname: "foo.example.com", VirtualHosts: true,
		Routes: []Route{
			httpRoute("a", 0, []string{"foo.example.com"}, rule("a-backend", HTTPRouteMatch{Path: prefix("/a")})),
			httpRoute("b", 1, []string{"*.example.com"}, rule("b-backend", HTTPRouteMatch{Path: prefix("/")})),
		},
	}}}
	runCases(t, gw, []tcase{
		{name: "/a", req: Request{Host: "foo.example.com", Path: "/a"}, backend: "a-backend"},
		{name: "/b reaches the wildcard route in the same virtual host", req: Request{Host: "foo.example.com", Path: "/b"}, backend: "b-backend"},
	})
}

package requestmatch

import "testing"

func tlsRoute(name string, age int, hosts []string, backend string) Route {
	return route(KindTLSRoute, name, age, hosts, Rule{BackendRefs: []BackendRef{{Name: backend}}})
}

// Source: conformance/tests/tlsroute-simple-same-namespace.go and
// tlsroute-simple-same-namespace.yaml: a TLS listener "*.example.com" on
// 443 and a TLSRoute for abc.example.com reach tcp-backend by SNI.
func TestTLSRouteSimpleSameNamespace(t *testing.T) {
	port := int32(8443)
	gw := Gateway{Namespace: ns, Name: "gateway-tlsroute", Listeners: []Listener{{
		Name: "https", Port: 443, Protocol: ProtocolTLS, Hostname: "*.example.com",
		Routes: []Route{route(KindTLSRoute, "gateway-conformance-infra-test", 0, []string{"abc.example.com"},
			Rule{BackendRefs: []BackendRef{{Name: "tcp-backend", Port: &port}}})},
	}}}
	runCases(t, gw, []tcase{
		{name: "abc.example.com", req: Request{Host: "abc.example.com", Port: 443}, backend: "tcp-backend"},
		{name: "other SNI under the listener", req: Request{Host: "xyz.example.com", Port: 443}, reason: ReasonNoRouteForHost},
		{name: "SNI outside the listener", req: Request{Host: "abc.example.net", Port: 443}, reason: ReasonNoListenerForHost},
	})
	res := Match(gw, Request{Host: "abc.example.com"})
	if len(res) != 1 || !res[0].Matched() || res[0].Backends[0].Port == nil || *res[0].Backends[0].Port != 8443 ||
		res[0].Backends[0].Namespace != ns || res[0].Backends[0].Kind != "Service" || res[0].Backends[0].Weight != 1 {
		t.Fatalf("result = %+v", res)
	}
}

// Source: conformance/tests/tlsroute-hostname-intersection.go and
// tlsroute-hostname-intersection.yaml: the most specific route hostname
// serves the SNI, whatever the listener's hostname.
func TestTLSRouteHostnameIntersection(t *testing.T) {
	gw := func(name, host string, routes ...Route) Gateway {
		return Gateway{Namespace: ns, Name: name, Listeners: []Listener{{Name: "l", Port: 443, Protocol: ProtocolTLS, Hostname: host, Routes: routes}}}
	}
	runCases(t, gw("gw-tlsroute-exact-hostname-x-1", "abc.example.com",
		tlsRoute("tlsroute-more-specific-wc-hostname-x-1", 0, []string{"*.example.com"}, "tls-backend")), []tcase{
		{name: "x-1 abc", req: Request{Host: "abc.example.com"}, backend: "tls-backend"},
		{name: "x-1 non.matching.com", req: Request{Host: "non.matching.com"}, reason: ReasonNoListenerForHost},
	})
	runCases(t, gw("gw-tlsroute-more-specific-wc-hostname-x-2", "*.example.com",
		tlsRoute("tlsroute-exact-hostname-x-2", 1, []string{"abc.example.com"}, "tls-backend"),
		tlsRoute("tlsroute-less-specific-wc-hostname-x-2", 0, []string{"*.com"}, "tls-backend-2")), []tcase{
		{name: "x-2 abc exact beats older wildcard", req: Request{Host: "abc.example.com"}, backend: "tls-backend"},
		{name: "x-2 other", req: Request{Host: "other.example.com"}, backend: "tls-backend-2"},
		{name: "x-2 non.matching.com", req: Request{Host: "non.matching.com"}, reason: ReasonNoListenerForHost},
	})
	runCases(t, gw("gw-tlsroute-less-specific-wc-hostname-x-3", "*.com",
		tlsRoute("tlsroute-exact-hostname-x-3", 0, []string{"abc.example.com"}, "tls-backend"),
		tlsRoute("tlsroute-more-specific-wc-hostname-x-3", 0, []string{"*.example.com"}, "tls-backend-2")), []tcase{
		{name: "x-3 abc", req: Request{Host: "abc.example.com"}, backend: "tls-backend"},
		{name: "x-3 other", req: Request{Host: "other.example.com"}, backend: "tls-backend-2"},
		{name: "x-3 non.matching.com", req: Request{Host: "non.matching.com"}, reason: ReasonNoRouteForHost},
	})
	runCases(t, gw("gw-tlsroute-empty-hostname-x-4", "",
		tlsRoute("tlsroute-exact-hostname-x-4", 0, []string{"abc.example.com"}, "tls-backend"),
		tlsRoute("tlsroute-less-specific-wc-hostname-x-4", 0, []string{"*.com"}, "tls-backend-2")), []tcase{
		{name: "x-4 abc", req: Request{Host: "abc.example.com"}, backend: "tls-backend"},
		{name: "x-4 other", req: Request{Host: "other.example.com"}, backend: "tls-backend-2"},
		{name: "x-4 non.matching.org", req: Request{Host: "non.matching.org"}, reason: ReasonNoRouteForHost},
		// Not in the conformance test: "*.com" covers any .com name.
		{name: "x-4 non.matching.com", req: Request{Host: "non.matching.com"}, backend: "tls-backend-2"},
	})
}

// Source: conformance/tests/tcproute-multiple-routes-attachment.go and
// udproute-multiple-routes-attachment.go (with their .yaml): two routes on
// one listener, all traffic reaches the older route's backend; and
// tcproute-weighted-routing.yaml for weights (70/30/0).
func TestTCPAndUDPRoutes(t *testing.T) {
	w := func(n int32) *int32 { return &n }
	gw := Gateway{Namespace: ns, Name: "l4", Listeners: []Listener{
		{Name: "tcp", Port: 9310, Protocol: ProtocolTCP, Routes: []Route{
			route(KindTCPRoute, "tcproute-attach-newer", 5, nil, Rule{BackendRefs: []BackendRef{{Name: "tcp-attach-backend-2"}}}),
			route(KindTCPRoute, "tcproute-attach-older", 0, nil, Rule{BackendRefs: []BackendRef{{Name: "tcp-attach-backend-1"}}}),
		}},
		{Name: "udp", Port: 5301, Protocol: ProtocolUDP, Routes: []Route{
			route(KindUDPRoute, "udproute-attach-older", 0, nil, Rule{BackendRefs: []BackendRef{{Name: "udp-attach-backend-1"}}}),
			route(KindUDPRoute, "udproute-attach-newer", 5, nil, Rule{BackendRefs: []BackendRef{{Name: "udp-attach-backend-2"}}}),
		}},
		{Name: "weighted", Port: 9320, Protocol: ProtocolTCP, Routes: []Route{
			route(KindTCPRoute, "tcp-weighted-route", 0, nil, Rule{BackendRefs: []BackendRef{
				{Name: "tcp-backend-v1", Weight: w(70)}, {Name: "tcp-backend-v2", Weight: w(30)}, {Name: "tcp-backend-v3", Weight: w(0)}}}),
		}},
		{Name: "empty", Port: 9330, Protocol: ProtocolTCP},
		// A UDP listener may share a port number with a TCP one.
		{Name: "udp-shared", Port: 9310, Protocol: ProtocolUDP, Routes: []Route{
			route(KindUDPRoute, "udp-shared", 0, nil, Rule{BackendRefs: []BackendRef{{Name: "udp-shared"}}}),
		}},
	}}
	runCases(t, gw, []tcase{
		{name: "tcp older route", req: Request{Port: 9310, Protocol: ProtocolTCP}, backend: "tcp-attach-backend-1", route: "tcproute-attach-older", rule: 0},
		{name: "udp older route", req: Request{Port: 5301}, backend: "udp-attach-backend-1"},
		{name: "udp beside tcp", req: Request{Port: 9310, Protocol: ProtocolUDP}, backend: "udp-shared"},
		{name: "no route", req: Request{Port: 9330}, reason: ReasonNoRoutes},
	})
	res := Match(gw, Request{Port: 9320})
	if len(res) != 1 || !res[0].Matched() {
		t.Fatalf("weighted: %+v", res)
	}
	var got []int32
	for _, b := range res[0].Backends {
		got = append(got, b.Weight)
	}
	if len(got) != 3 || got[0] != 70 || got[1] != 30 || got[2] != 0 {
		t.Errorf("weights = %v, want [70 30 0]", got)
	}
	if res := Match(gw, Request{Port: 9310}); len(res) != 2 || res[0].Listener != "tcp" || res[1].Listener != "udp-shared" {
		t.Errorf("port 9310 without protocol: %+v", res)
	}
}

package requestmatch

import "testing"

// Source: conformance/tests/httproute-listener-hostname-matching.go and
// httproute-listener-hostname-matching.yaml: an exact listener hostname
// beats a wildcard one on the same port; "*.bar.com" covers any depth below
// bar.com but not bar.com itself.
func TestListenerHostnameMatching(t *testing.T) {
	all := func(b string) Rule { return rule(b) }
	v3route := httpRoute("backend-v3", 0, nil, all(v3))
	gw := Gateway{Namespace: ns, Name: "httproute-listener-hostname-matching", Listeners: []Listener{
		{Name: "listener-1", Port: 80, Protocol: ProtocolHTTP, Hostname: "bar.com", Routes: []Route{httpRoute("backend-v1", 0, nil, all(v1))}},
		{Name: "listener-2", Port: 80, Protocol: ProtocolHTTP, Hostname: "foo.bar.com", Routes: []Route{httpRoute("backend-v2", 0, nil, all(v2))}},
		{Name: "listener-3", Port: 80, Protocol: ProtocolHTTP, Hostname: "*.bar.com", Routes: []Route{v3route}},
		{Name: "listener-4", Port: 80, Protocol: ProtocolHTTP, Hostname: "*.foo.com", Routes: []Route{v3route}},
	}}
	runCases(t, gw, []tcase{
		{name: "bar.com", req: Request{Host: "bar.com", Path: "/"}, backend: v1, listener: "listener-1"},
		{name: "foo.bar.com exact beats *.bar.com", req: Request{Host: "foo.bar.com", Path: "/"}, backend: v2, listener: "listener-2"},
		{name: "baz.bar.com", req: Request{Host: "baz.bar.com", Path: "/"}, backend: v3, listener: "listener-3"},
		{name: "boo.bar.com", req: Request{Host: "boo.bar.com", Path: "/"}, backend: v3, listener: "listener-3"},
		{name: "multiple.prefixes.bar.com", req: Request{Host: "multiple.prefixes.bar.com", Path: "/"}, backend: v3, listener: "listener-3"},
		{name: "multiple.prefixes.foo.com", req: Request{Host: "multiple.prefixes.foo.com", Path: "/"}, backend: v3, listener: "listener-4"},
		{name: "foo.com is not *.foo.com", req: Request{Host: "foo.com", Path: "/"}, reason: ReasonNoListenerForHost},
		{name: "no.matching.host", req: Request{Host: "no.matching.host", Path: "/"}, reason: ReasonNoListenerForHost},
	})
}

// Source: Listener in apis/v1/gateway_types.go ("Listeners that are distinct
// only by Hostname": exact, then more specific wildcards, then no
// hostname), and ports: a request with a port only reaches that port; one
// without reaches every port that has a listener for it.
func TestListenerSelection(t *testing.T) {
	r := func(b string) []Route { return []Route{httpRoute(b, 0, nil, rule(b))} }
	gw := Gateway{Namespace: ns, Name: "gw", Listeners: []Listener{
		{Name: "catch-all", Port: 80, Protocol: ProtocolHTTP, Routes: r("catch-all")},
		{Name: "wide", Port: 80, Protocol: ProtocolHTTP, Hostname: "*.example.com", Routes: r("wide")},
		{Name: "narrow", Port: 80, Protocol: ProtocolHTTP, Hostname: "*.foo.example.com", Routes: r("narrow")},
		{Name: "https", Port: 443, Protocol: ProtocolHTTPS, Hostname: "*.example.com", Routes: r("https")},
		{Name: "tcp", Port: 5432, Protocol: ProtocolTCP, Routes: []Route{route(KindTCPRoute, "db", 0, nil, Rule{BackendRefs: []BackendRef{{Name: "db"}}})}},
	}}
	runCases(t, gw, []tcase{
		{name: "more labels right of * win", req: Request{Host: "a.foo.example.com", Port: 80}, backend: "narrow"},
		{name: "wildcard beats no hostname", req: Request{Host: "a.example.com", Port: 80}, backend: "wide"},
		{name: "apex falls to no hostname", req: Request{Host: "example.com", Port: 80}, backend: "catch-all"},
		{name: "https port", req: Request{Host: "a.example.com", Port: 443}, backend: "https"},
		{name: "https has no listener for the apex", req: Request{Host: "example.com", Port: 443}, reason: ReasonNoListenerForHost},
		{name: "no listener on port", req: Request{Host: "a.example.com", Port: 8080}, reason: ReasonNoListenerOnPort},
		{name: "tcp by port only", req: Request{Host: "anything", Port: 5432}, backend: "db"},
		{name: "protocol filter", req: Request{Host: "a.example.com", Protocol: ProtocolHTTPS}, backend: "https"},
		{name: "no UDP listener", req: Request{Protocol: ProtocolUDP}, reason: ReasonNoListenerOnPort},
	})

	// Without a port the request is traced through every port that takes it.
	res := Match(gw, Request{Host: "a.example.com"})
	var got []string
	for _, r := range res {
		got = append(got, r.Listener)
	}
	if want := []string{"wide", "https", "tcp"}; !equal(got, want) {
		t.Errorf("listeners = %v, want %v", got, want)
	}
	for _, r := range res {
		if r.GatewayName != "gw" || r.GatewayNamespace != ns {
			t.Errorf("result %s lacks the gateway: %+v", r.Listener, r)
		}
	}

	if res := Match(Gateway{Name: "empty"}, Request{}); len(res) != 1 || res[0].Reason != ReasonNoListeners {
		t.Errorf("empty gateway: %+v", res)
	}
}

// Source: conformance/tests/httproute-hostname-intersection.go and
// httproute-hostname-intersection.yaml: route hostnames count only where
// they intersect the listener's, and a port in the Host header is ignored.
func TestHTTPRouteHostnameIntersection(t *testing.T) {
	s1 := httpRoute("specific-host-matches-listener-specific-host", 0,
		[]string{"non.matching.com", "*.nonmatchingwildcard.io", "very.specific.com"}, rule(v1, HTTPRouteMatch{Path: prefix("/s1")}))
	s2 := httpRoute("specific-host-matches-listener-wildcard-host", 0,
		[]string{"non.matching.com", "wildcard.io", "foo.wildcard.io", "bar.wildcard.io", "foo.bar.wildcard.io"}, rule(v2, HTTPRouteMatch{Path: prefix("/s2")}))
	s3 := httpRoute("wildcard-host-matches-listener-specific-host", 0,
		[]string{"non.matching.com", "*.specific.com"}, rule(v3, HTTPRouteMatch{Path: prefix("/s3")}))
	s4 := httpRoute("wildcard-host-matches-listener-wildcard-host", 0,
		[]string{"*.anotherwildcard.io"}, rule(v1, HTTPRouteMatch{Path: prefix("/s4")}))
	// no-intersecting-hosts is rejected (NoMatchingListenerHostname), so the
	// caller attaches it nowhere; it is listed on every listener here to show
	// that its hostnames are ignored anyway.
	s5 := httpRoute("no-intersecting-hosts", 0, []string{"specific.but.wrong.com", "wildcard.io"}, rule(v2, HTTPRouteMatch{Path: prefix("/s5")}))
	gw := Gateway{Namespace: ns, Name: "httproute-hostname-intersection", Listeners: []Listener{
		{Name: "listener-1", Port: 80, Protocol: ProtocolHTTP, Hostname: "very.specific.com", Routes: []Route{s1, s3, s5}},
		{Name: "listener-2", Port: 80, Protocol: ProtocolHTTP, Hostname: "*.wildcard.io", Routes: []Route{s2, s5}},
		{Name: "listener-3", Port: 80, Protocol: ProtocolHTTP, Hostname: "*.anotherwildcard.io", Routes: []Route{s4, s5}},
	}}
	runCases(t, gw, []tcase{
		{name: "s1", req: Request{Host: "very.specific.com", Path: "/s1"}, backend: v1},
		{name: "s1 host with port", req: Request{Host: "very.specific.com:1234", Path: "/s1"}, backend: v1},
		{name: "s1 non.matching.com", req: Request{Host: "non.matching.com", Path: "/s1"}, reason: ReasonNoListenerForHost},
		{name: "s1 foo.nonmatchingwildcard.io", req: Request{Host: "foo.nonmatchingwildcard.io", Path: "/s1"}, reason: ReasonNoListenerForHost},
		{name: "s1 foo.wildcard.io", req: Request{Host: "foo.wildcard.io", Path: "/s1"}, reason: ReasonNoRuleMatches},
		{name: "s1 wrong prefix", req: Request{Host: "very.specific.com", Path: "/non-matching-prefix"}, reason: ReasonNoRuleMatches},
		{name: "s2 foo", req: Request{Host: "foo.wildcard.io", Path: "/s2"}, backend: v2},
		{name: "s2 bar", req: Request{Host: "bar.wildcard.io", Path: "/s2"}, backend: v2},
		{name: "s2 foo.bar", req: Request{Host: "foo.bar.wildcard.io", Path: "/s2"}, backend: v2},
		{name: "s2 non.matching.com", req: Request{Host: "non.matching.com", Path: "/s2"}, reason: ReasonNoListenerForHost},
		{name: "s2 wildcard.io", req: Request{Host: "wildcard.io", Path: "/s2"}, reason: ReasonNoListenerForHost},
		{name: "s2 very.specific.com", req: Request{Host: "very.specific.com", Path: "/s2"}, reason: ReasonNoRuleMatches},
		{name: "s2 wrong prefix", req: Request{Host: "foo.wildcard.io", Path: "/non-matching-prefix"}, reason: ReasonNoRuleMatches},
		{name: "s3", req: Request{Host: "very.specific.com", Path: "/s3"}, backend: v3},
		{name: "s3 non.matching.com", req: Request{Host: "non.matching.com", Path: "/s3"}, reason: ReasonNoListenerForHost},
		{name: "s3 foo.specific.com", req: Request{Host: "foo.specific.com", Path: "/s3"}, reason: ReasonNoListenerForHost},
		{name: "s3 foo.wildcard.io", req: Request{Host: "foo.wildcard.io", Path: "/s3"}, reason: ReasonNoRuleMatches},
		{name: "s4 foo", req: Request{Host: "foo.anotherwildcard.io", Path: "/s4"}, backend: v1},
		{name: "s4 bar", req: Request{Host: "bar.anotherwildcard.io", Path: "/s4"}, backend: v1},
		{name: "s4 foo.bar", req: Request{Host: "foo.bar.anotherwildcard.io", Path: "/s4"}, backend: v1},
		{name: "s4 apex", req: Request{Host: "anotherwildcard.io", Path: "/s4"}, reason: ReasonNoListenerForHost},
		{name: "s4 foo.wildcard.io", req: Request{Host: "foo.wildcard.io", Path: "/s4"}, reason: ReasonNoRuleMatches},
		{name: "s4 very.specific.com", req: Request{Host: "very.specific.com", Path: "/s4"}, reason: ReasonNoRuleMatches},
		{name: "s5 specific.but.wrong.com", req: Request{Host: "specific.but.wrong.com", Path: "/s5"}, reason: ReasonNoListenerForHost},
		{name: "s5 wildcard.io", req: Request{Host: "wildcard.io", Path: "/s5"}, reason: ReasonNoListenerForHost},
		{name: "s5 ignored on a listener it does not intersect", req: Request{Host: "foo.wildcard.io", Path: "/s5"}, reason: ReasonNoRuleMatches},
	})

	all := Gateway{Namespace: ns, Name: "httproute-hostname-intersection-all", Listeners: []Listener{
		{Name: "listener-1", Port: 80, Protocol: ProtocolHTTP, Routes: []Route{
			httpRoute("httproute-hostname-intersection-all", 0, []string{"first.com", "sub.first.com", "second.com", "sub.second.com"}, rule(v2)),
		}},
	}}
	runCases(t, all, []tcase{
		{name: "first.com", req: Request{Host: "first.com", Path: "/"}, backend: v2},
		{name: "sub.first.com", req: Request{Host: "sub.first.com", Path: "/"}, backend: v2},
		{name: "second.com", req: Request{Host: "second.com", Path: "/"}, backend: v2},
		{name: "sub.second.com", req: Request{Host: "sub.second.com", Path: "/"}, backend: v2},
		{name: "third.com", req: Request{Host: "third.com", Path: "/"}, reason: ReasonNoRouteForHost},
		{name: "sub.third.com", req: Request{Host: "sub.third.com", Path: "/"}, reason: ReasonNoRouteForHost},
	})
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

package requestmatch

import (
	"strings"
	"testing"
)

// Every failure says why in words; the brief's messages, and what the
// Gateway API asks of unknown values ("implementations must ensure that
// unknown values will not cause a crash").
func TestMessages(t *testing.T) {
	gw := Gateway{Namespace: ns, Name: "gw", Listeners: []Listener{
		{Name: "http", Port: 80, Protocol: ProtocolHTTP, Hostname: "*.example.com", Routes: []Route{
			httpRoute("r", 0, []string{"a.example.com"}, rule("b", HTTPRouteMatch{Path: exact("/only")})),
		}},
		{Name: "bare", Port: 81, Protocol: ProtocolHTTP},
		{Name: "tls", Port: 443, Protocol: ProtocolTLS, Routes: []Route{route(KindTLSRoute, "norules", 0, nil)}},
	}}
	for _, tc := range []struct {
		req    Request
		reason Reason
		msg    string
	}{
		{Request{Port: 8080}, ReasonNoListenerOnPort, "no listener on port 8080"},
		{Request{Port: 8080, Protocol: ProtocolUDP}, ReasonNoListenerOnPort, "no UDP listener on port 8080"},
		{Request{Port: 80, Host: "example.org"}, ReasonNoListenerForHost, `no listener on port 80 for host "example.org"`},
		{Request{Port: 80, Host: "b.example.com"}, ReasonNoRouteForHost, `no HTTPRoute on listener http matches host "b.example.com"`},
		{Request{Port: 80, Host: "a.example.com", Path: "/other"}, ReasonNoRuleMatches, `no rule matches path "/other"`},
		{Request{Port: 81, Host: "a.example.com"}, ReasonNoRoutes, "no HTTPRoute attached to listener bare"},
		{Request{Port: 443, Host: "a.example.com"}, ReasonNoRuleMatches, "TLSRoute gateway-conformance-infra/norules has no rules"},
	} {
		res := Match(gw, tc.req)
		if res[0].Reason != tc.reason || !strings.Contains(res[0].Message, tc.msg) {
			t.Errorf("%+v: got %s %q, want %s containing %q", tc.req, res[0].Reason, res[0].Message, tc.reason, tc.msg)
		}
	}
}

// Bad regular expressions and unknown match types make their match fail, say
// so in the message, and leave the other matches working.
func TestBadInputs(t *testing.T) {
	gw := oneListener(
		httpRoute("bad", 0, nil,
			rule("bad-path", HTTPRouteMatch{Path: regex("(")}),
			rule("bad-header", HTTPRouteMatch{Headers: []HeaderMatch{{Type: MatchRegularExpression, Name: "x", Value: "["}}}),
			rule("bad-type", HTTPRouteMatch{Path: &HTTPPathMatch{Type: "Glob", Value: "/*"}}),
			rule("bad-query", HTTPRouteMatch{QueryParams: []QueryParamMatch{{Type: "Fuzzy", Name: "q", Value: "v"}}}),
			rule("good", HTTPRouteMatch{Path: exact("/good")}),
		),
		grpcRoute("bad-grpc", 0, nil, grpcRule("bad-grpc", GRPCRouteMatch{Method: &GRPCMethodMatch{Type: MatchRegularExpression, Service: "(", Method: "M"}})),
	)
	res := Match(gw, Request{Path: "/x", Headers: map[string]string{"x": "["}, QueryParams: map[string]string{"q": "v"}})
	if res[0].Reason != ReasonNoRuleMatches {
		t.Fatalf("got %+v", res[0])
	}
	for _, want := range []string{`invalid regular expression "("`, `invalid regular expression "["`, `unsupported path match type "Glob"`, `unsupported match type "Fuzzy"`} {
		if !strings.Contains(res[0].Message, want) {
			t.Errorf("message %q lacks %q", res[0].Message, want)
		}
	}
	if res := Match(gw, Request{Path: "/good"}); !res[0].Matched() || res[0].Backends[0].Name != "good" {
		t.Errorf("good rule: %+v", res[0])
	}
	res = Match(gw, Request{GRPC: true, Path: "/S/M"})
	if res[0].Reason != ReasonNoRuleMatches || !strings.Contains(res[0].Message, "invalid regular expression") {
		t.Errorf("grpc: %+v", res[0])
	}
}

// Zero values and odd shapes never panic and always give a Reason.
func TestZeroValues(t *testing.T) {
	empty := Route{}
	gws := []Gateway{
		{},
		{Listeners: []Listener{{}}},
		{Listeners: []Listener{{Protocol: ProtocolHTTP, Routes: []Route{empty, {Kind: KindHTTPRoute}, {Kind: KindHTTPRoute, Rules: []Rule{{}}}}}}},
		{Listeners: []Listener{{Protocol: ProtocolHTTP, Routes: []Route{{Kind: KindHTTPRoute, Rules: []Rule{{Matches: []HTTPRouteMatch{{}}}}}}}}},
		{Listeners: []Listener{{Protocol: ProtocolHTTP, Routes: []Route{{Kind: KindGRPCRoute, Rules: []Rule{{GRPCMatches: []GRPCRouteMatch{{Method: &GRPCMethodMatch{}}}}}}}}}},
		{Listeners: []Listener{{Protocol: ProtocolTLS, Routes: []Route{{Kind: KindTCPRoute}, {Kind: KindTLSRoute}}}}},
		{Listeners: []Listener{{Protocol: ProtocolUDP, Routes: []Route{{Kind: KindUDPRoute}}}}},
		{Listeners: []Listener{{Protocol: "Custom", Routes: []Route{{Kind: "Other"}, {Kind: KindTCPRoute, Rules: []Rule{{}}}}}}},
	}
	reqs := []Request{{}, {GRPC: true}, {Host: ":", Path: "?%zz&a=b#f"}, {Path: "no-slash", Method: "get"}, {Host: "*.x", Port: -1}}
	for gi, gw := range gws {
		for ri, req := range reqs {
			for _, res := range Match(gw, req) {
				if res.Reason == "" {
					t.Errorf("gateway %d request %d: no reason: %+v", gi, ri, res)
				}
				if res.Reason != ReasonMatched && res.Message == "" {
					t.Errorf("gateway %d request %d: no message: %+v", gi, ri, res)
				}
			}
			_ = MatchListener(Listener{}, req)
		}
	}
	// An HTTPRoute rule with no matches serves every path (PathPrefix "/").
	res := Match(gws[2], Request{Path: "/deep/path"})
	if !res[0].Matched() || res[0].Rule.MatchIndex != -1 || res[0].Message != "the rule has no backendRefs" {
		t.Errorf("default match: %+v", res[0])
	}
}

// FuzzMatch checks that no request panics against a gateway with every kind
// of match (go test runs the seeds; go test -fuzz explores).
func FuzzMatch(f *testing.F) {
	gw := Gateway{Listeners: []Listener{
		{Name: "http", Port: 80, Protocol: ProtocolHTTP, Hostname: "*.example.com", Routes: []Route{
			httpRoute("a", 0, []string{"a.example.com", "*.b.example.com"},
				rule("x", HTTPRouteMatch{Path: regex("/r/.*"), Headers: []HeaderMatch{{Type: MatchRegularExpression, Name: "h", Value: "v.*"}}, QueryParams: []QueryParamMatch{qp("q", "1")}, Method: "GET"}),
				rule("y", HTTPRouteMatch{Path: prefix("/p/")}, HTTPRouteMatch{Path: exact("/e")})),
			grpcRoute("g", 0, nil, grpcRule("g", GRPCRouteMatch{Method: &GRPCMethodMatch{Type: MatchRegularExpression, Service: "s.*", Method: "M"}})),
		}},
		{Name: "tls", Port: 443, Protocol: ProtocolTLS, Routes: []Route{tlsRoute("t", 0, []string{"*.example.com"}, "t")}},
	}}
	f.Add("a.example.com", "GET", "/r/x?q=1", "h", "v1", int32(80), false)
	f.Add("c.b.example.com:80", "", "/p/", "", "", int32(0), true)
	f.Add("", "", "", "", "", int32(443), false)
	f.Fuzz(func(t *testing.T, host, method, path, hname, hval string, port int32, grpc bool) {
		req := Request{Host: host, Method: method, Path: path, Port: port, GRPC: grpc, Headers: map[string]string{hname: hval}}
		for _, res := range Match(gw, req) {
			if res.Reason == "" {
				t.Fatalf("no reason for %+v", req)
			}
		}
	})
}

package requestmatch

import (
	"testing"
	"time"
)

// ns is the namespace of the conformance manifests.
const ns = "gateway-conformance-infra"

// t0 is the creation time of the oldest route in a table; age n is n minutes later.
var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func route(kind RouteKind, name string, age int, hosts []string, rules ...Rule) Route {
	return Route{Kind: kind, Namespace: ns, Name: name, CreationTimestamp: t0.Add(time.Duration(age) * time.Minute), Hostnames: hosts, Rules: rules}
}

func httpRoute(name string, age int, hosts []string, rules ...Rule) Route {
	return route(KindHTTPRoute, name, age, hosts, rules...)
}

// rule is an HTTPRoute rule sending to backend (port 8080, as in the manifests).
func rule(backend string, ms ...HTTPRouteMatch) Rule {
	port := int32(8080)
	return Rule{Matches: ms, BackendRefs: []BackendRef{{Name: backend, Port: &port}}}
}

func grpcRule(backend string, ms ...GRPCRouteMatch) Rule {
	return Rule{GRPCMatches: ms, BackendRefs: []BackendRef{{Name: backend}}}
}

func prefix(p string) *HTTPPathMatch { return &HTTPPathMatch{Type: PathMatchPathPrefix, Value: p} }
func exact(p string) *HTTPPathMatch  { return &HTTPPathMatch{Type: PathMatchExact, Value: p} }
func regex(p string) *HTTPPathMatch {
	return &HTTPPathMatch{Type: PathMatchRegularExpression, Value: p}
}

func hdr(name, value string) HeaderMatch    { return HeaderMatch{Name: name, Value: value} }
func qp(name, value string) QueryParamMatch { return QueryParamMatch{Name: name, Value: value} }

// oneListener is the conformance "same-namespace" Gateway: one HTTP
// listener on port 80 with no hostname.
func oneListener(routes ...Route) Gateway {
	return Gateway{Namespace: ns, Name: "same-namespace", Listeners: []Listener{{Name: "http", Port: 80, Protocol: ProtocolHTTP, Routes: routes}}}
}

// tcase is one request and what the conformance test expects: the backend
// it reaches, or "" for a 404 / rejected connection, with the Reason then.
type tcase struct {
	name     string
	req      Request
	backend  string
	route    string // when set, the route that must win
	rule     int    // when route is set, the rule index that must win
	listener string // when set, the listener that must take the request
	reason   Reason // when backend is "", the Reason expected (if set)
}

func runCases(t *testing.T, gw Gateway, cases []tcase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			results := Match(gw, tc.req)
			if len(results) == 0 {
				t.Fatalf("no results")
			}
			var got *Result
			for i := range results {
				if results[i].Matched() {
					got = &results[i]
					break
				}
			}
			if tc.backend == "" {
				if got != nil {
					t.Fatalf("want no match, got %+v", *got)
				}
				if tc.reason != "" && results[0].Reason != tc.reason {
					t.Fatalf("reason = %s (%s), want %s", results[0].Reason, results[0].Message, tc.reason)
				}
				if results[0].Message == "" {
					t.Fatalf("no message for %s", results[0].Reason)
				}
				return
			}
			if got == nil {
				t.Fatalf("want backend %s, got no match: %s: %s", tc.backend, results[0].Reason, results[0].Message)
			}
			if len(got.Backends) == 0 || got.Backends[0].Name != tc.backend {
				t.Fatalf("backends = %+v, want %s (route %v rule %v)", got.Backends, tc.backend, got.Route, got.Rule)
			}
			if tc.route != "" && (got.Route.Name != tc.route || got.Rule.Index != tc.rule) {
				t.Fatalf("route %s rule %d, want %s rule %d", got.Route.Name, got.Rule.Index, tc.route, tc.rule)
			}
			if tc.listener != "" && got.Listener != tc.listener {
				t.Fatalf("listener = %s, want %s", got.Listener, tc.listener)
			}
		})
	}
}

package requestmatch

import "testing"

const (
	v1 = "infra-backend-v1"
	v2 = "infra-backend-v2"
	v3 = "infra-backend-v3"
)

// Source: conformance/tests/httproute-matching.go and httproute-matching.yaml
// (sigs.k8s.io/gateway-api/conformance v1.6.3).
func TestHTTPRouteMatching(t *testing.T) {
	gw := oneListener(httpRoute("matching", 0, nil,
		rule(v1, HTTPRouteMatch{Path: prefix("/")}, HTTPRouteMatch{Headers: []HeaderMatch{hdr("version", "one")}}),
		rule(v2, HTTPRouteMatch{Path: prefix("/v2")}, HTTPRouteMatch{Headers: []HeaderMatch{hdr("version", "two")}}),
	))
	runCases(t, gw, []tcase{
		{name: "/", req: Request{Path: "/"}, backend: v1},
		{name: "/example", req: Request{Path: "/example"}, backend: v1},
		{name: "/ version one", req: Request{Path: "/", Headers: map[string]string{"Version": "one"}}, backend: v1},
		{name: "/v2", req: Request{Path: "/v2"}, backend: v2},
		{name: "/v2/example", req: Request{Path: "/v2/example"}, backend: v2},
		{name: "/ version two", req: Request{Path: "/", Headers: map[string]string{"Version": "two"}}, backend: v2},
		{name: "/v2/ trailing slash", req: Request{Path: "/v2/"}, backend: v2},
		// Near miss: a prefix matches whole segments only.
		{name: "/v2example", req: Request{Path: "/v2example"}, backend: v1},
		{name: "/foo/v2/example", req: Request{Path: "/foo/v2/example"}, backend: v1},
	})
}

// Source: conformance/tests/httproute-matching-across-routes.go and
// httproute-matching-across-routes.yaml: precedence is across the rules of
// all routes, not route by route.
func TestHTTPRouteMatchingAcrossRoutes(t *testing.T) {
	gw := oneListener(
		httpRoute("matching-part1", 0, []string{"example.com", "example.net"},
			rule(v1, HTTPRouteMatch{Path: prefix("/")}, HTTPRouteMatch{Headers: []HeaderMatch{hdr("version", "one")}})),
		httpRoute("matching-part2", 1, []string{"example.com"},
			rule(v2, HTTPRouteMatch{Path: prefix("/v2")}, HTTPRouteMatch{Headers: []HeaderMatch{hdr("version", "two")}})),
	)
	runCases(t, gw, []tcase{
		{name: "example.com /", req: Request{Host: "example.com", Path: "/"}, backend: v1},
		{name: "example.com /example", req: Request{Host: "example.com", Path: "/example"}, backend: v1},
		{name: "example.net /example", req: Request{Host: "example.net", Path: "/example"}, backend: v1},
		{name: "example.com /example version one", req: Request{Host: "example.com", Path: "/example", Headers: map[string]string{"Version": "one"}}, backend: v1},
		{name: "example.com /v2", req: Request{Host: "example.com", Path: "/v2"}, backend: v2, route: "matching-part2", rule: 0},
		{name: "example.net /v2 (part2 not for this host)", req: Request{Host: "example.net", Path: "/v2"}, backend: v1, route: "matching-part1", rule: 0},
		{name: "example.com /v2/example", req: Request{Host: "example.com", Path: "/v2/example"}, backend: v2},
		{name: "example.com / version two", req: Request{Host: "example.com", Path: "/", Headers: map[string]string{"Version": "two"}}, backend: v2},
		{name: "other host", req: Request{Host: "example.org", Path: "/"}, reason: ReasonNoRouteForHost},
	})
}

// Source: conformance/tests/httproute-header-matching.go and
// httproute-header-matching.yaml; header names are case-insensitive
// (the test sends "Version" and "Color" for matches on "version", "color").
func TestHTTPRouteHeaderMatching(t *testing.T) {
	gw := oneListener(httpRoute("header-matching", 0, nil,
		rule(v1, HTTPRouteMatch{Headers: []HeaderMatch{hdr("version", "one")}}),
		rule(v2, HTTPRouteMatch{Headers: []HeaderMatch{hdr("version", "two")}}),
		rule(v1, HTTPRouteMatch{Headers: []HeaderMatch{hdr("version", "two"), hdr("color", "orange")}}),
		rule(v1, HTTPRouteMatch{Headers: []HeaderMatch{hdr("color", "blue")}}, HTTPRouteMatch{Headers: []HeaderMatch{hdr("color", "green")}}),
		rule(v2, HTTPRouteMatch{Headers: []HeaderMatch{hdr("color", "red")}}, HTTPRouteMatch{Headers: []HeaderMatch{hdr("color", "yellow")}}),
	))
	h := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	runCases(t, gw, []tcase{
		{name: "version one", req: Request{Path: "/", Headers: h("Version", "one")}, backend: v1, route: "header-matching", rule: 0},
		{name: "version two", req: Request{Path: "/", Headers: h("Version", "two")}, backend: v2, route: "header-matching", rule: 1},
		{name: "version two color orange", req: Request{Path: "/", Headers: h("Version", "two", "Color", "orange")}, backend: v1, route: "header-matching", rule: 2},
		// Tie: rules 1 and 3 both match one header; the first rule wins.
		{name: "version two color blue", req: Request{Path: "/", Headers: h("Version", "two", "Color", "blue")}, backend: v2, route: "header-matching", rule: 1},
		{name: "color orange alone", req: Request{Path: "/", Headers: h("Color", "orange")}, reason: ReasonNoRuleMatches},
		{name: "other header", req: Request{Path: "/", Headers: h("Some-Other-Header", "one")}, reason: ReasonNoRuleMatches},
		{name: "color blue", req: Request{Path: "/", Headers: h("Color", "blue")}, backend: v1},
		{name: "color green", req: Request{Path: "/", Headers: h("Color", "green")}, backend: v1},
		{name: "color red", req: Request{Path: "/", Headers: h("Color", "red")}, backend: v2},
		{name: "color yellow", req: Request{Path: "/", Headers: h("Color", "yellow")}, backend: v2},
		{name: "color purple", req: Request{Path: "/", Headers: h("Color", "purple")}, reason: ReasonNoRuleMatches},
		// Header values are exact: case matters there.
		{name: "value case", req: Request{Path: "/", Headers: h("version", "One")}, reason: ReasonNoRuleMatches},
		{name: "name in upper case", req: Request{Path: "/", Headers: h("VERSION", "one")}, backend: v1},
	})
}

// Source: conformance/tests/httproute-query-param-matching.go and
// httproute-query-param-matching.yaml; query parameter names are
// case-sensitive ("ANIMAL=Whale" is its own match).
func TestHTTPRouteQueryParamMatching(t *testing.T) {
	gw := oneListener(httpRoute("query-param-matching", 0, nil,
		rule(v1, HTTPRouteMatch{QueryParams: []QueryParamMatch{qp("animal", "whale")}}),
		rule(v2, HTTPRouteMatch{QueryParams: []QueryParamMatch{qp("animal", "dolphin")}}),
		rule(v3, HTTPRouteMatch{QueryParams: []QueryParamMatch{qp("animal", "dolphin"), qp("color", "blue")}},
			HTTPRouteMatch{QueryParams: []QueryParamMatch{qp("ANIMAL", "Whale")}}),
		rule(v1, HTTPRouteMatch{Path: prefix("/path1"), QueryParams: []QueryParamMatch{qp("animal", "whale")}}),
		rule(v2, HTTPRouteMatch{Headers: []HeaderMatch{hdr("version", "one")}, QueryParams: []QueryParamMatch{qp("animal", "whale")}}),
		rule(v3, HTTPRouteMatch{Path: prefix("/path2"), Headers: []HeaderMatch{hdr("version", "two")}, QueryParams: []QueryParamMatch{qp("animal", "whale")}}),
		rule(v1, HTTPRouteMatch{Path: prefix("/path3"), QueryParams: []QueryParamMatch{qp("animal", "shark")}},
			HTTPRouteMatch{Path: prefix("/path4"), Headers: []HeaderMatch{hdr("version", "three")}, QueryParams: []QueryParamMatch{qp("animal", "kraken")}}),
		rule(v1, HTTPRouteMatch{Path: prefix("/path5")}),
		rule(v2, HTTPRouteMatch{QueryParams: []QueryParamMatch{qp("animal", "hydra")}}),
		rule(v3, HTTPRouteMatch{Headers: []HeaderMatch{hdr("version", "four")}}),
	))
	runCases(t, gw, []tcase{
		{name: "whale", req: Request{Path: "/?animal=whale"}, backend: v1},
		{name: "dolphin", req: Request{Path: "/?animal=dolphin"}, backend: v2},
		{name: "dolphin blue (two params beat one)", req: Request{Path: "/?animal=dolphin&color=blue"}, backend: v3},
		{name: "ANIMAL=Whale", req: Request{Path: "/?ANIMAL=Whale"}, backend: v3},
		{name: "whale and irrelevant", req: Request{Path: "/?animal=whale&otherparam=irrelevant"}, backend: v1},
		{name: "dolphin yellow", req: Request{Path: "/?animal=dolphin&color=yellow"}, backend: v2},
		{name: "color only", req: Request{Path: "/?color=blue"}, reason: ReasonNoRuleMatches},
		{name: "dog", req: Request{Path: "/?animal=dog"}, reason: ReasonNoRuleMatches},
		{name: "whaledolphin", req: Request{Path: "/?animal=whaledolphin"}, reason: ReasonNoRuleMatches},
		{name: "no query", req: Request{Path: "/"}, reason: ReasonNoRuleMatches},
		{name: "path1 whale", req: Request{Path: "/path1?animal=whale"}, backend: v1},
		{name: "version one whale", req: Request{Path: "/?animal=whale", Headers: map[string]string{"version": "one"}}, backend: v2},
		{name: "path2 version two whale", req: Request{Path: "/path2?animal=whale", Headers: map[string]string{"version": "two"}}, backend: v3},
		{name: "path3 shark", req: Request{Path: "/path3?animal=shark"}, backend: v1},
		{name: "path4 three kraken", req: Request{Path: "/path4?animal=kraken", Headers: map[string]string{"version": "three"}}, backend: v1},
		{name: "shark off path3", req: Request{Path: "/?animal=shark"}, reason: ReasonNoRuleMatches},
		{name: "kraken without header", req: Request{Path: "/path4?animal=kraken"}, reason: ReasonNoRuleMatches},
		// Precedence: a longer prefix beats a query match; a query match beats nothing, a header match beats a query match.
		{name: "path5 hydra", req: Request{Path: "/path5?animal=hydra"}, backend: v1},
		{name: "version four hydra", req: Request{Path: "/?animal=hydra", Headers: map[string]string{"version": "four"}}, backend: v3},
		// The QueryParams field works like the query string.
		{name: "query map", req: Request{Path: "/", QueryParams: map[string]string{"animal": "dolphin"}}, backend: v2},
	})
}

// Source: conformance/tests/httproute-method-matching.go and
// httproute-method-matching.yaml.
func TestHTTPRouteMethodMatching(t *testing.T) {
	m := func(method string, path *HTTPPathMatch, hs ...HeaderMatch) HTTPRouteMatch {
		return HTTPRouteMatch{Method: method, Path: path, Headers: hs}
	}
	gw := oneListener(httpRoute("method-matching", 0, nil,
		rule(v1, m("POST", nil)),
		rule(v2, m("GET", nil)),
		rule(v1, m("GET", prefix("/path1"))),
		rule(v2, m("PUT", nil, hdr("version", "one"))),
		rule(v3, m("POST", prefix("/path2"), hdr("version", "two"))),
		rule(v1, m("PATCH", prefix("/path3")), m("DELETE", prefix("/path4"), hdr("version", "three"))),
		rule(v1, m("", prefix("/path5"))),
		rule(v2, m("PATCH", nil)),
		rule(v3, m("", nil, hdr("version", "four"))),
	))
	ver := func(v string) map[string]string { return map[string]string{"version": v} }
	runCases(t, gw, []tcase{
		{name: "POST /", req: Request{Method: "POST", Path: "/"}, backend: v1},
		{name: "GET /", req: Request{Method: "GET", Path: "/"}, backend: v2},
		{name: "HEAD /", req: Request{Method: "HEAD", Path: "/"}, reason: ReasonNoRuleMatches},
		{name: "GET /path1", req: Request{Method: "GET", Path: "/path1"}, backend: v1},
		{name: "PUT / version one", req: Request{Method: "PUT", Path: "/", Headers: ver("one")}, backend: v2},
		{name: "POST /path2 version two", req: Request{Method: "POST", Path: "/path2", Headers: ver("two")}, backend: v3},
		{name: "PATCH /path3", req: Request{Method: "PATCH", Path: "/path3"}, backend: v1},
		{name: "DELETE /path4 version three", req: Request{Method: "DELETE", Path: "/path4", Headers: ver("three")}, backend: v1},
		{name: "PUT / without header", req: Request{Method: "PUT", Path: "/"}, reason: ReasonNoRuleMatches},
		{name: "DELETE /path4 without header", req: Request{Method: "DELETE", Path: "/path4"}, reason: ReasonNoRuleMatches},
		// Precedence: a longer prefix beats a method, a method beats a header.
		{name: "PATCH /path5", req: Request{Method: "PATCH", Path: "/path5"}, backend: v1},
		{name: "PATCH / version four", req: Request{Method: "PATCH", Path: "/", Headers: ver("four")}, backend: v2},
		// A request with no method is a GET.
		{name: "no method", req: Request{Path: "/"}, backend: v2},
	})
}

// Source: the precedence list of HTTPRouteRule.Matches in
// apis/v1/httproute_types.go (gateway-api v1.6.3): Exact over PathPrefix
// (longest first) over RegularExpression, then the oldest route, then
// namespace/name, then the first rule.
func TestHTTPRoutePrecedence(t *testing.T) {
	gw := oneListener(
		httpRoute("b-prefix-foo", 2, nil, rule("prefix-foo", HTTPRouteMatch{Path: prefix("/foo")})),
		httpRoute("c-prefix-foo-bar", 3, nil, rule("prefix-foo-bar", HTTPRouteMatch{Path: prefix("/foo/bar/")})),
		httpRoute("d-exact", 4, nil, rule("exact-foo-bar", HTTPRouteMatch{Path: exact("/foo/bar")})),
		httpRoute("e-regex", 0, nil, rule("regex", HTTPRouteMatch{Path: regex("/foo.*")})),
	)
	runCases(t, gw, []tcase{
		{name: "exact beats longer-lived prefixes", req: Request{Path: "/foo/bar"}, backend: "exact-foo-bar"},
		{name: "longest prefix", req: Request{Path: "/foo/bar/baz"}, backend: "prefix-foo-bar"},
		{name: "prefix beats older regex", req: Request{Path: "/foo/x"}, backend: "prefix-foo"},
		{name: "exact is exact (no trailing slash)", req: Request{Path: "/foo/bar/"}, backend: "prefix-foo-bar"},
		{name: "/foobar: regex only", req: Request{Path: "/foobar"}, backend: "regex"},
		{name: "regex is anchored", req: Request{Path: "/x/foo"}, reason: ReasonNoRuleMatches},
	})

	// Equal precedence: the oldest route wins, then namespace/name, then the first rule.
	tie := oneListener(
		httpRoute("newer", 5, nil, rule("newer", HTTPRouteMatch{Path: prefix("/a")})),
		httpRoute("older", 1, nil, rule("older", HTTPRouteMatch{Path: prefix("/a")})),
		httpRoute("zz", 0, nil, rule("zz", HTTPRouteMatch{Path: prefix("/b")})),
		httpRoute("aa", 0, nil, rule("aa-0", HTTPRouteMatch{Path: prefix("/b/")}), rule("aa-1", HTTPRouteMatch{Path: prefix("/b")})),
		httpRoute("zz-more-headers", 9, nil, rule("headers", HTTPRouteMatch{Path: prefix("/a"), Headers: []HeaderMatch{hdr("x", "1")}})),
	)
	runCases(t, tie, []tcase{
		{name: "oldest route", req: Request{Path: "/a"}, backend: "older"},
		{name: "more headers beat age", req: Request{Path: "/a", Headers: map[string]string{"X": "1"}}, backend: "headers"},
		{name: "same age: namespace/name, then first rule", req: Request{Path: "/b/c"}, backend: "aa-0", route: "aa", rule: 0},
	})
}

// Source: HTTPRouteSpec.Hostnames in apis/v1/httproute_types.go: rules of
// the route with the most specific matching hostname come first, before any
// path precedence.
func TestHTTPRouteHostnamePrecedence(t *testing.T) {
	gw := oneListener(
		httpRoute("wildcard", 0, []string{"*.example.com"}, rule("wildcard", HTTPRouteMatch{Path: exact("/x")})),
		httpRoute("exact", 1, []string{"foo.example.com"}, rule("exact", HTTPRouteMatch{Path: prefix("/")})),
		httpRoute("any", 0, nil, rule("any", HTTPRouteMatch{Path: exact("/x")}), rule("any-z", HTTPRouteMatch{Path: exact("/z")})),
	)
	runCases(t, gw, []tcase{
		{name: "exact hostname beats exact path", req: Request{Host: "foo.example.com", Path: "/x"}, backend: "exact"},
		{name: "wildcard hostname beats none", req: Request{Host: "bar.example.com", Path: "/x"}, backend: "wildcard"},
		{name: "wildcard does not cover the apex", req: Request{Host: "example.com", Path: "/x"}, backend: "any"},
		{name: "no route has /y", req: Request{Host: "bar.example.com", Path: "/y"}, reason: ReasonNoRuleMatches},
		// One order over all matches: the wildcard route has no /z, the
		// route without hostnames does.
		{name: "falls through to a less specific route", req: Request{Host: "bar.example.com", Path: "/z"}, backend: "any-z"},
		{name: "host case and port ignored", req: Request{Host: "FOO.Example.com:8080", Path: "/x"}, backend: "exact"},
	})
}

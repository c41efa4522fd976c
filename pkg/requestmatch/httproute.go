package requestmatch

import (
	"fmt"
	"regexp"
	"strings"
)

// Path match kinds in precedence order (httproute_types.go: "Exact" path
// match, then "Prefix" path match with the largest number of characters;
// RegularExpression precedence is implementation-specific, it goes last).
const (
	pathRegex = iota
	pathPrefix
	pathExact
)

// httpCandidate is one HTTPRouteMatch that holds for the request, with what
// the precedence rules compare.
type httpCandidate struct {
	hr       hostRoute
	ruleIdx  int
	matchIdx int
	pathKind int
	pathLen  int
	method   bool
	headers  int
	query    int
}

// before reports whether a takes precedence over b, in the order of
// HTTPRouteRule.Matches in httproute_types.go: hostname (HTTPRouteSpec
// .Hostnames: "precedence must be given to rules from the HTTPRoute with the
// largest number of characters in a matching non-wildcard hostname, then
// in a matching hostname"), Exact path, longest prefix, method, most header
// matches, most query param matches, the oldest route, namespace/name, and
// within a route the first rule (and its first match).
func (a *httpCandidate) before(b *httpCandidate) bool {
	if c := a.hr.score.cmp(b.hr.score); c != 0 {
		return c > 0
	}
	if a.pathKind != b.pathKind {
		return a.pathKind > b.pathKind
	}
	if a.pathLen != b.pathLen {
		return a.pathLen > b.pathLen
	}
	if a.method != b.method {
		return a.method
	}
	if a.headers != b.headers {
		return a.headers > b.headers
	}
	if a.query != b.query {
		return a.query > b.query
	}
	if c := olderRoute(a.hr.route, b.hr.route); c != 0 {
		return c < 0
	}
	if a.ruleIdx != b.ruleIdx {
		return a.ruleIdx < b.ruleIdx
	}
	return a.matchIdx < b.matchIdx
}

// defaultHTTPMatch is what the API defaults an empty matches list to.
var defaultHTTPMatch = []HTTPRouteMatch{{Path: &HTTPPathMatch{Type: PathMatchPathPrefix, Value: "/"}}}

func matchHTTP(l *Listener, routes []*Route, req Request, host string) Result {
	hrs := routesForHost(l, routes, host)
	if len(hrs) == 0 {
		return noRouteForHost(l, KindHTTPRoute, host)
	}
	r := parseRequest(req)
	var best *httpCandidate
	var bad notes
	for _, hr := range hrs {
		for ri := range hr.route.Rules {
			ms := hr.route.Rules[ri].Matches
			explicit := len(ms) > 0
			if !explicit {
				ms = defaultHTTPMatch
			}
			for mi := range ms {
				c, err := evalHTTPMatch(&ms[mi], r)
				if err != nil {
					bad.add(hr.route, ri, mi, err)
				}
				if c == nil {
					continue
				}
				c.hr, c.ruleIdx, c.matchIdx = hr, ri, mi
				if !explicit {
					c.matchIdx = -1
				}
				if best == nil || c.before(best) {
					best = c
				}
			}
		}
	}
	if best == nil {
		res := listenerResult(l)
		res.Reason = ReasonNoRuleMatches
		res.Message = fmt.Sprintf("no rule matches path %q (method %s) in HTTPRoute %s%s", r.path, r.method, routeNames(hrs), bad)
		return res
	}
	return matched(l, best.hr.route, best.ruleIdx, best.matchIdx)
}

// evalHTTPMatch returns the candidate for m when all its parts hold, nil
// when one does not or cannot be evaluated (err says why).
func evalHTTPMatch(m *HTTPRouteMatch, r httpRequest) (*httpCandidate, error) {
	c := &httpCandidate{}
	ok, kind, n, err := matchPath(m.Path, r.path)
	if err != nil || !ok {
		return nil, err
	}
	c.pathKind, c.pathLen = kind, n
	if m.Method != "" {
		if m.Method != r.method {
			return nil, nil
		}
		c.method = true
	}
	if ok, c.headers, err = matchHeaders(m.Headers, r.headers); !ok {
		return nil, err
	}
	if ok, c.query, err = matchQuery(m.QueryParams, r.query); !ok {
		return nil, err
	}
	return c, nil
}

// matchPath applies an HTTPPathMatch (nil or empty: PathPrefix "/"). A
// prefix matches whole path segments: "/foo" matches "/foo", "/foo/" and
// "/foo/bar" but not "/foobar", and a trailing "/" on the prefix is
// ignored. n is the prefix length without that slash, for precedence.
func matchPath(pm *HTTPPathMatch, path string) (ok bool, kind, n int, err error) {
	t, v := PathMatchPathPrefix, "/"
	if pm != nil {
		if pm.Type != "" {
			t = pm.Type
		}
		if pm.Value != "" {
			v = pm.Value
		}
	}
	switch t {
	case PathMatchExact:
		return path == v, pathExact, len(v), nil
	case PathMatchPathPrefix:
		p := strings.TrimSuffix(v, "/")
		ok := p == "" || path == p || strings.HasPrefix(path, p+"/")
		return ok, pathPrefix, len(p), nil
	case PathMatchRegularExpression:
		var re *regexp.Regexp
		if re, err = compileFull(v); err != nil {
			return false, pathRegex, 0, err
		}
		return re.MatchString(path), pathRegex, 0, nil
	default:
		return false, 0, 0, fmt.Errorf("unsupported path match type %q", t)
	}
}

package requestmatch

import (
	"fmt"
	"strings"
)

// grpcCandidate is one GRPCRouteMatch that holds for the call.
type grpcCandidate struct {
	hr           hostRoute
	ruleIdx      int
	matchIdx     int
	serviceChars int
	methodChars  int
	headers      int
}

// before reports whether a takes precedence over b, in the order of
// GRPCRouteRule.Matches in grpcroute_types.go: characters in a matching
// non-wildcard hostname, in a matching hostname, in a matching service, in a
// matching method, header matches; then the oldest route, namespace/name,
// and the first matching rule.
func (a *grpcCandidate) before(b *grpcCandidate) bool {
	if c := a.hr.score.cmp(b.hr.score); c != 0 {
		return c > 0
	}
	if a.serviceChars != b.serviceChars {
		return a.serviceChars > b.serviceChars
	}
	if a.methodChars != b.methodChars {
		return a.methodChars > b.methodChars
	}
	if a.headers != b.headers {
		return a.headers > b.headers
	}
	if c := olderRoute(a.hr.route, b.hr.route); c != 0 {
		return c < 0
	}
	if a.ruleIdx != b.ruleIdx {
		return a.ruleIdx < b.ruleIdx
	}
	return a.matchIdx < b.matchIdx
}

// grpcName splits a gRPC request path "/package.Service/Method".
func grpcName(path string) (service, method string) {
	service, method, _ = strings.Cut(strings.TrimPrefix(path, "/"), "/")
	return service, method
}

func matchGRPC(l *Listener, routes []*Route, req Request, host string) Result {
	hrs := routesForHost(l, routes, host)
	if len(hrs) == 0 {
		return noRouteForHost(l, KindGRPCRoute, host)
	}
	r := parseRequest(req)
	service, method := grpcName(r.path)
	var best *grpcCandidate
	var bad notes
	consider := func(c *grpcCandidate) {
		if best == nil || c.before(best) {
			best = c
		}
	}
	for _, hr := range hrs {
		for ri := range hr.route.Rules {
			ms := hr.route.Rules[ri].GRPCMatches
			if len(ms) == 0 {
				// No matches: every call, with the lowest precedence.
				consider(&grpcCandidate{hr: hr, ruleIdx: ri, matchIdx: -1})
				continue
			}
			for mi := range ms {
				c, err := evalGRPCMatch(&ms[mi], service, method, r.headers)
				if err != nil {
					bad.add(hr.route, ri, mi, err)
				}
				if c != nil {
					c.hr, c.ruleIdx, c.matchIdx = hr, ri, mi
					consider(c)
				}
			}
		}
	}
	if best == nil {
		res := listenerResult(l)
		res.Reason = ReasonNoRuleMatches
		res.Message = fmt.Sprintf("no rule matches method %q in GRPCRoute %s%s", service+"/"+method, routeNames(hrs), bad)
		return res
	}
	return matched(l, best.hr.route, best.ruleIdx, best.matchIdx)
}

// evalGRPCMatch returns the candidate for m when it holds. An empty service
// or method matches any; their lengths (the pattern's, for a regular
// expression) count for precedence.
func evalGRPCMatch(m *GRPCRouteMatch, service, method string, headers map[string][]string) (*grpcCandidate, error) {
	c := &grpcCandidate{}
	if mm := m.Method; mm != nil {
		for _, part := range []struct{ pattern, value string }{{mm.Service, service}, {mm.Method, method}} {
			if part.pattern == "" {
				continue
			}
			ok, err := matchValue(mm.Type, part.pattern, part.value)
			if err != nil || !ok {
				return nil, err
			}
		}
		c.serviceChars, c.methodChars = len(mm.Service), len(mm.Method)
	}
	ok, n, err := matchHeaders(m.Headers, headers)
	if !ok {
		return nil, err
	}
	c.headers = n
	return c, nil
}

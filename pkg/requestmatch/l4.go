package requestmatch

import "fmt"

// matchTLS chooses the TLSRoute for the SNI: the route with the most
// specific hostname that serves it (as for HTTPRoute hostnames;
// conformance tlsroute-hostname-intersection sends abc.example.com to the
// exact route and other.example.com to the wildcard one), then the oldest,
// then namespace/name. A TLSRoute has no matches: its first rule serves.
func matchTLS(l *Listener, routes []*Route, _ Request, host string) Result {
	hrs := routesForHost(l, routes, host)
	if len(hrs) == 0 {
		return noRouteForHost(l, KindTLSRoute, host)
	}
	best := hrs[0]
	for _, hr := range hrs[1:] {
		c := hr.score.cmp(best.score)
		if c > 0 || c == 0 && olderRoute(hr.route, best.route) < 0 {
			best = hr
		}
	}
	return firstRule(l, best.route)
}

// oldestRoute serves TCPRoute and UDPRoute: they match nothing but the
// listener, so the oldest route (then namespace/name) takes the traffic, by
// the listener's AllowedRoutes precedence in gateway_types.go.
func oldestRoute(l *Listener, routes []*Route, _ Request, _ string) Result {
	best := routes[0]
	for _, r := range routes[1:] {
		if olderRoute(r, best) < 0 {
			best = r
		}
	}
	return firstRule(l, best)
}

// firstRule is the Result for a route whose rules have no matches: the
// first rule serves (implementations support one rule on these kinds).
func firstRule(l *Listener, r *Route) Result {
	if len(r.Rules) == 0 {
		res := listenerResult(l)
		res.Route = &RouteRef{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
		res.Reason = ReasonNoRuleMatches
		res.Message = fmt.Sprintf("%s %s/%s has no rules", r.Kind, r.Namespace, r.Name)
		return res
	}
	return matched(l, r, 0, -1)
}

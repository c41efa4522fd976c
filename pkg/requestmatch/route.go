package requestmatch

import (
	"fmt"
	"strings"
)

// MatchListener chooses the route, rule and backends that listener l gives
// req, ignoring the listener's own port and hostname (Match and
// SelectListeners choose the listener).
func MatchListener(l Listener, req Request) Result {
	return matchListener(&l, req, normalizeHost(req.Host))
}

// matcher tries the routes of one kind on a listener.
type matcher struct {
	kind  RouteKind
	match func(l *Listener, routes []*Route, req Request, host string) Result
}

var (
	httpMatcher = matcher{KindHTTPRoute, matchHTTP}
	grpcMatcher = matcher{KindGRPCRoute, matchGRPC}
	tlsMatcher  = matcher{KindTLSRoute, matchTLS}
	tcpMatcher  = matcher{KindTCPRoute, oldestRoute}
	udpMatcher  = matcher{KindUDPRoute, oldestRoute}
)

// matchersFor lists, in the order they are tried, the route kinds a listener
// of protocol p serves (the route kinds of ListenerStatus.SupportedKinds for
// the core protocols). A later kind is tried only when no route of the
// earlier one was for the host: the Gateway API lets only one of an
// HTTPRoute and a GRPCRoute serve a hostname on a listener, so a gRPC call
// whose host no GRPCRoute serves goes to the HTTPRoutes, which see it as a
// POST to /service/method. A protocol this package does not know (an
// implementation's own) may carry any kind.
func matchersFor(p Protocol, grpc bool) []matcher {
	switch {
	case isProtocol(p, ProtocolHTTP), isProtocol(p, ProtocolHTTPS):
		if grpc {
			return []matcher{grpcMatcher, httpMatcher}
		}
		return []matcher{httpMatcher}
	case isProtocol(p, ProtocolTLS):
		return []matcher{tlsMatcher, tcpMatcher}
	case isProtocol(p, ProtocolTCP):
		return []matcher{tcpMatcher}
	case isProtocol(p, ProtocolUDP):
		return []matcher{udpMatcher}
	case grpc:
		return []matcher{grpcMatcher, httpMatcher, tlsMatcher, tcpMatcher, udpMatcher}
	default:
		return []matcher{httpMatcher, tlsMatcher, tcpMatcher, udpMatcher}
	}
}

// depth orders failures by how far the request got, so the Result reports
// the one closest to a match.
func depth(r Reason) int {
	switch r {
	case ReasonMatched:
		return 3
	case ReasonNoRuleMatches:
		return 2
	case ReasonNoRouteForHost:
		return 1
	}
	return 0
}

func matchListener(l *Listener, req Request, host string) Result {
	ms := matchersFor(l.Protocol, req.GRPC)
	var kinds []string
	var best *Result
	for _, m := range ms {
		kinds = append(kinds, string(m.kind))
		var routes []*Route
		for i := range l.Routes {
			if l.Routes[i].Kind == m.kind {
				routes = append(routes, &l.Routes[i])
			}
		}
		if len(routes) == 0 {
			continue
		}
		res := m.match(l, routes, req, host)
		if best == nil || depth(res.Reason) > depth(best.Reason) {
			best = &res
		}
		if depth(res.Reason) >= depth(ReasonNoRuleMatches) {
			break
		}
	}
	if best == nil {
		res := listenerResult(l)
		res.Reason = ReasonNoRoutes
		res.Message = fmt.Sprintf("no %s attached to listener %s", strings.Join(kinds, " or "), l.Name)
		return res
	}
	return *best
}

// noRouteForHost is the Result when no route of kind on l is for host.
func noRouteForHost(l *Listener, kind RouteKind, host string) Result {
	res := listenerResult(l)
	res.Reason = ReasonNoRouteForHost
	res.Message = fmt.Sprintf("no %s on listener %s matches host %q", kind, l.Name, host)
	return res
}

// hostRoute is a route that serves the host, with its hostname precedence.
type hostRoute struct {
	route *Route
	score hostScore
}

// routesForHost keeps the routes with a hostname that serves host on l;
// with virtual hosts, only those of the most specific such hostname (for
// one host, the score names one hostname: the exact host, or the one
// wildcard of that length).
func routesForHost(l *Listener, routes []*Route, host string) []hostRoute {
	var out []hostRoute
	var best hostScore
	for _, r := range routes {
		if s, ok := routeHostScore(l.Hostname, r.Hostnames, host); ok {
			out = append(out, hostRoute{route: r, score: s})
			if s.cmp(best) > 0 {
				best = s
			}
		}
	}
	if !l.VirtualHosts {
		return out
	}
	kept := out[:0]
	for _, hr := range out {
		if hr.score == best {
			kept = append(kept, hr)
		}
	}
	return kept
}

// olderRoute is the tie-break across routes of every route kind: the oldest
// creationTimestamp, then "{namespace}/{name}" in alphabetical order. It
// returns <0 when a goes first, 0 for the same route.
func olderRoute(a, b *Route) int {
	if !a.CreationTimestamp.Equal(b.CreationTimestamp) {
		if a.CreationTimestamp.Before(b.CreationTimestamp) {
			return -1
		}
		return 1
	}
	return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
}

// routeNames lists the routes as namespace/name for messages.
func routeNames(hr []hostRoute) string {
	names := make([]string, 0, len(hr))
	for _, h := range hr {
		names = append(names, h.route.Namespace+"/"+h.route.Name)
	}
	return strings.Join(names, ", ")
}

// notes collects why matches could not be evaluated (bad regular expressions,
// unknown match types), for the message when nothing matches.
type notes []string

func (n *notes) add(r *Route, rule, match int, err error) {
	*n = append(*n, fmt.Sprintf("%s/%s rule %d match %d: %v", r.Namespace, r.Name, rule, match, err))
}

func (n notes) String() string {
	const shown = 5
	if len(n) == 0 {
		return ""
	}
	s := n
	if len(s) > shown {
		s = s[:shown]
	}
	out := "; ignored " + strings.Join(s, "; ")
	if len(n) > shown {
		out += fmt.Sprintf("; and %d more", len(n)-shown)
	}
	return out
}

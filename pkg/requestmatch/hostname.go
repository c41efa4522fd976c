package requestmatch

import (
	"net"
	"strings"
)

// normalizeHost lowers the case of a Host header or SNI and drops a port and
// a trailing dot: the Gateway API says implementations MUST ignore a port in
// the Host header when matching (httproute-hostname-intersection sends
// "very.specific.com:1234"), and DNS names are case-insensitive.
func normalizeHost(h string) string {
	h = strings.TrimSpace(h)
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// RouteServesHost reports whether a route with these hostnames (none:
// every host) serves the request host (as a Host header or SNI: a port and
// a trailing dot are ignored, so is case).
func RouteServesHost(hostnames []string, host string) bool {
	if len(hostnames) == 0 {
		return true
	}
	h := normalizeHost(host)
	for _, p := range hostnames {
		if HostnameMatches(p, h) {
			return true
		}
	}
	return false
}

// HostnameMatches reports whether host matches a Gateway API hostname
// pattern: "" matches every host, "*.example.com" matches any name below
// example.com ("foo.example.com", "a.b.example.com") but not "example.com",
// anything else matches itself only (case-insensitively).
func HostnameMatches(pattern, host string) bool {
	pattern = strings.ToLower(pattern)
	host = strings.ToLower(host)
	switch {
	case pattern == "":
		return true
	case pattern == "*":
		return host != ""
	case strings.HasPrefix(pattern, "*."):
		suffix := pattern[1:] // ".example.com"
		return len(host) > len(suffix) && strings.HasSuffix(host, suffix)
	default:
		return pattern == host
	}
}

// intersect is the hostname that both a listener hostname and a route
// hostname accept, the more specific of the two; ok is false when they share
// no name. The specification says route hostnames that do not match the
// listener's MUST be ignored, and a "*.example.com" route under a
// "foo.example.com" listener only ever sees foo.example.com.
func intersect(listener, route string) (string, bool) {
	listener, route = strings.ToLower(listener), strings.ToLower(route)
	switch {
	case listener == "":
		return route, true
	case route == "" || route == listener:
		return listener, true
	case HostnameMatches(route, listener):
		return listener, true
	case HostnameMatches(listener, route):
		return route, true
	}
	return "", false
}

// listenerRank orders listener hostnames for one host: exact names first,
// then wildcards by the number of labels right of the "*" (more first), then
// no hostname. Bigger is more specific.
type listenerRank struct {
	tier   int // 2 exact, 1 wildcard, 0 none
	labels int
	length int
}

func (a listenerRank) less(b listenerRank) bool {
	if a.tier != b.tier {
		return a.tier < b.tier
	}
	if a.labels != b.labels {
		return a.labels < b.labels
	}
	return a.length < b.length
}

func rankListenerHostname(h string) listenerRank {
	switch {
	case h == "":
		return listenerRank{}
	case strings.HasPrefix(h, "*"):
		return listenerRank{tier: 1, labels: strings.Count(h, "."), length: len(h)}
	default:
		return listenerRank{tier: 2, labels: strings.Count(h, ".") + 1, length: len(h)}
	}
}

// hostScore is a route's hostname precedence for one host, from the
// HTTPRoute and GRPCRoute specifications: the largest number of characters
// in a matching non-wildcard hostname, then in a matching hostname.
type hostScore struct {
	exactChars int
	chars      int
}

func (a hostScore) cmp(b hostScore) int {
	if a.exactChars != b.exactChars {
		return a.exactChars - b.exactChars
	}
	return a.chars - b.chars
}

// routeHostScore is the best score of the route's hostnames that, once
// intersected with the listener hostname, match host; ok is false when none
// does. A route without hostnames takes the listener's.
func routeHostScore(listenerHost string, routeHosts []string, host string) (hostScore, bool) {
	if len(routeHosts) == 0 {
		routeHosts = []string{""}
	}
	best, found := hostScore{}, false
	for _, rh := range routeHosts {
		eff, ok := intersect(listenerHost, rh)
		if !ok || !HostnameMatches(eff, host) {
			continue
		}
		s := hostScore{chars: len(eff)}
		if eff != "" && !strings.HasPrefix(eff, "*") {
			s.exactChars = len(eff)
		}
		if !found || s.cmp(best) > 0 {
			best, found = s, true
		}
	}
	return best, found
}

package requestmatch

import (
	"net"
	"strings"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/hostname"
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
		if hostname.Matches(p, h) {
			return true
		}
	}
	return false
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
		eff, ok := hostname.Intersect(listenerHost, rh)
		if !ok || !hostname.Matches(eff, host) {
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

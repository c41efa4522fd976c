package compute

// Listener and route hostnames (Gateway API v1.6, HTTPRoute/GRPCRoute/TLSRoute spec.hostnames
// and Listener.hostname): a route attaches through a listener only when their hostnames
// intersect.

import "strings"

// hostnamesIntersect reports whether a route with the given hostnames may attach through
// listener l: a listener without a hostname, or whose protocol matches no hostnames (TCP,
// UDP), and a route without hostnames match everything; otherwise one route hostname must
// match the listener's.
func hostnamesIntersect(l listener, routeHosts []string) bool {
	if l.hostname == "" || len(routeHosts) == 0 || l.protocol == "TCP" || l.protocol == "UDP" {
		return true
	}
	for _, h := range routeHosts {
		if hostnameMatch(l.hostname, h) {
			return true
		}
	}
	return false
}

// hostnameMatch reports whether two hostnames, each exact or with a leading wildcard label,
// have a name in common. A wildcard label "*." matches one or more labels (so *.example.com
// matches test.example.com and foo.test.example.com, never example.com); two wildcards
// intersect when one's suffix ends with the other's.
func hostnameMatch(a, b string) bool {
	if a == b {
		return true
	}
	aw, bw := strings.HasPrefix(a, "*."), strings.HasPrefix(b, "*.")
	switch {
	case aw && bw:
		return strings.HasSuffix(a[1:], b[1:]) || strings.HasSuffix(b[1:], a[1:])
	case aw:
		return strings.HasSuffix(b, a[1:])
	case bw:
		return strings.HasSuffix(a, b[1:])
	}
	return false
}

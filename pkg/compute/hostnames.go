package compute

// Listener and route hostnames (Gateway API v1.6, HTTPRoute/GRPCRoute/TLSRoute spec.hostnames
// and Listener.hostname): a route attaches through a listener only when their hostnames
// intersect.

import "github.com/effectivepolicy-dev/effectivepolicy/internal/hostname"

// hostnamesIntersect reports whether a route with the given hostnames may attach through
// listener l: a listener without a hostname, or whose protocol matches no hostnames (TCP,
// UDP), and a route without hostnames match everything; otherwise one route hostname must
// have a name in common with the listener's (internal/hostname: a leading "*." label stands
// for one or more labels, so *.example.com takes test.example.com and foo.test.example.com,
// never example.com).
func hostnamesIntersect(l listener, routeHosts []string) bool {
	if l.hostname == "" || len(routeHosts) == 0 || l.protocol == "TCP" || l.protocol == "UDP" {
		return true
	}
	for _, h := range routeHosts {
		if _, ok := hostname.Intersect(l.hostname, h); ok {
			return true
		}
	}
	return false
}

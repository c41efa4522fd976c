package topology

// Listener and route hostnames (Gateway API v1.6, HTTPRoute/GRPCRoute/TLSRoute spec.hostnames
// and Listener.hostname): a route attaches through a listener only when their hostnames
// intersect.

import "github.com/effectivepolicy-dev/effectivepolicy/internal/hostname"

// HostnamesIntersect reports whether a route with the given hostnames may attach through
// listener l: a listener without a hostname, or whose protocol matches no hostnames (TCP,
// UDP), and a route without hostnames match everything; otherwise one route hostname must
// have a name in common with the listener's (internal/hostname: a leading "*." label stands
// for one or more labels, so *.example.com takes test.example.com and foo.test.example.com,
// never example.com).
func HostnamesIntersect(l Listener, routeHosts []string) bool {
	if l.Hostname == "" || len(routeHosts) == 0 || l.Protocol == "TCP" || l.Protocol == "UDP" {
		return true
	}
	for _, h := range routeHosts {
		if _, ok := hostname.Intersect(l.Hostname, h); ok {
			return true
		}
	}
	return false
}

// Package hostname is the Gateway API's hostname rule, the one place both the
// attachment of routes to listeners (pkg/compute) and request matching
// (pkg/requestmatch) take it from: a hostname is exact or has a leading "*."
// label, which stands for one or more labels.
package hostname

import "strings"

// Matches reports whether host matches a Gateway API hostname
// pattern: "" matches every host, "*.example.com" matches any name below
// example.com ("foo.example.com", "a.b.example.com") but not "example.com",
// anything else matches itself only (case-insensitively).
func Matches(pattern, host string) bool {
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

// Intersect is the hostname that both a listener hostname and a route
// hostname accept, the more specific of the two; ok is false when they share
// no name. The specification says route hostnames that do not match the
// listener's MUST be ignored, and a "*.example.com" route under a
// "foo.example.com" listener only ever sees foo.example.com.
func Intersect(listener, route string) (string, bool) {
	listener, route = strings.ToLower(listener), strings.ToLower(route)
	switch {
	case listener == "":
		return route, true
	case route == "" || route == listener:
		return listener, true
	case Matches(route, listener):
		return listener, true
	case Matches(listener, route):
		return route, true
	}
	return "", false
}

// Package kuadrant is the Kuadrant profile (RateLimitPolicy, TokenRateLimitPolicy,
// AuthPolicy, DNSPolicy, TLSPolicy): docs/spec.md §5's fold, except that a merge keeps or
// replaces named rules (limits, auth rules) whole; DNSPolicy and TLSPolicy are Direct, the
// oldest policy on a Gateway or listener winning and a listener policy beating the Gateway's
// for its listener (direct.go); and each kind takes effect only where kuadrant-operator
// applies it — Gateways and routes, never their backends (reach.go), and DNSPolicy and
// TLSPolicy only on listeners that can carry a DNS name or a certificate (listeners.go). It
// is a folder of its own, behind semantics.Profile, so that Kuadrant's rules are read and
// changed alone.
package kuadrant

// Package kuadrant is the Kuadrant profile (RateLimitPolicy, TokenRateLimitPolicy,
// AuthPolicy): docs/spec.md §5's fold, except that a merge keeps or replaces named rules
// (limits, auth rules) whole, and each kind takes effect only where kuadrant-operator
// computes effective policies for it — Gateways and routes, never their backends
// (reach.go). It is a folder of its own, behind semantics.Profile, so that Kuadrant's
// rules are read and changed alone.
package kuadrant

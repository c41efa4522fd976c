// Package kuadrant is the Kuadrant profile (RateLimitPolicy, AuthPolicy):
// docs/spec.md §5's fold, except that a merge keeps or replaces named rules (limits,
// auth rules) whole. It is a folder of its own, behind semantics.Profile, so
// that Kuadrant's rules are read and changed alone.
package kuadrant

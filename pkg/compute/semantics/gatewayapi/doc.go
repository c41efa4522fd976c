// Package gatewayapi is the Gateway API profile (BackendTLSPolicy, XBackendTrafficPolicy):
// Direct kinds whose rule is docs/spec.md §5.3 as written (a policy on a Service port beats one
// on the whole Service; on one target the oldest wins, then namespace/name, the others
// Conflicted), taking effect on backends only (reach.go). It is a folder of its own, behind
// semantics.Profile, so that Gateway API's own rules are read and changed alone.
package gatewayapi

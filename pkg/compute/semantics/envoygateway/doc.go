// Package envoygateway is the Envoy Gateway profile (BackendTrafficPolicy,
// SecurityPolicy, EnvoyExtensionPolicy, ClientTrafficPolicy, EnvoyPatchPolicy):
// the most specific policy applies (route rule, route, ListenerSet listener,
// ListenerSet, Gateway listener, Gateway), a route policy with mergeType
// merged onto the closest Gateway-side policy, and the oldest of two
// policies on one target wins; on TCP and UDP routes only the settings
// Envoy Gateway applies there, each from the most specific policy that has
// it; every EnvoyPatchPolicy on a Gateway applies. It is a folder of its
// own, behind semantics.Profile, so that Envoy Gateway's rules are read,
// checked against upstream and changed alone.
package envoygateway

// Package envoygateway is the Envoy Gateway profile (BackendTrafficPolicy,
// SecurityPolicy, EnvoyExtensionPolicy, ClientTrafficPolicy): the most
// specific policy applies, a route policy with mergeType merged onto the
// closest listener or Gateway policy, and the oldest of two policies on one
// target wins. It is a folder of its own, behind semantics.Profile, so that
// Envoy Gateway's rules are read, checked against upstream and changed alone.
package envoygateway

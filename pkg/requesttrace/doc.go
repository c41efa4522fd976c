// Package requesttrace answers a RequestTrace (docs/spec.md §9): it reads the
// Gateways, their listeners and attached routes from the engine's view
// (compute.View), lets pkg/requestmatch choose listener, route, rule and
// backends, and picks from the computed EffectivePolicies the effective
// entry of exactly the context the request travels: this Gateway, this
// listener, this route and rule, this backend.
//
// The context's entry is found by its via: the engine computes the via of
// the request's path for every policy kind (View.Vias), and the entry of
// the route's (or backend's) EffectivePolicy with that via, and with the
// rule's (port's) section name when a policy targets that section, is the
// one the data plane applies there. Nothing is computed twice: the answer
// is what `kubectl get effectivepolicy` serves, for one context.
//
// How a Gateway chooses among route hostnames depends on its
// implementation, named by its GatewayClass's controllerName
// (implementations.go).
//
// Callers see only what they may read: a Gateway, ListenerSet, route or
// backend in a namespace the caller's visibility function rejects is not
// named (Caller.Visible), and the effective policies come through the
// caller's own view of them (Caller.Effective, redacted by the REST layer).
package requesttrace

package kuadrant

// Kuadrant computes the effective AuthPolicy, RateLimitPolicy and TokenRateLimitPolicy per route
// rule only, from kuadrant-operator v1.5.2 (internal/controller):
//
//   - effective_ratelimit_policies_reconciler.go and effective_auth_policies_reconciler.go
//     calculateEffectivePolicies fold the policies of each path targetables.Paths(gatewayClass,
//     routeRule), for every HTTPRouteRule and GRPCRouteRule; effective_tokenratelimit_policies_
//     reconciler.go calculateEffectivePolicies for every HTTPRouteRule. No path ends at a route:
//     a route's policy takes effect only through the paths of its rules, and the policies'
//     Enforced conditions (ratelimit_policy_status_updater.go, auth_policy_status_updater.go,
//     tokenratelimitpolicy_status_updater.go enforcedCondition) read those paths only.
//   - policy-machinery v0.8.0 (machinery/gateway_api_topology.go HTTPRouteRulesFromHTTPRouteFunc,
//     GRPCRouteRulesFromGRPCRouteRule) gives every rule a node, an unnamed one named
//     rule-<index+1>, which a policy's targetRef sectionName names like any other
//     (UnnamedRuleSections).
//
// The engine keeps a route's whole-object context too (docs/spec.md §5.7); it is the context of
// the route's rules that bear no policy of the kind. When every rule bears one, no rule falls into
// it, and Kuadrant has no such path: the route gets no whole-route entry of the kind
// (semantics.RuleContexts), so a policy every rule overrides is Overridden, as Kuadrant says.

// RuleContextsOnly implements semantics.RuleContexts: the three kinds whose reconcilers fold
// per route rule. DNSPolicy and TLSPolicy are Direct kinds on Gateways; a kind of a descriptor
// of its own that names the Kuadrant semantics keeps the generic contexts.
func (Profile) RuleContextsOnly(kind string) bool {
	_, ok := kuadrantUnits[kind]
	return ok
}

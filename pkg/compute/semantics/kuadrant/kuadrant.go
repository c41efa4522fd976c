package kuadrant

// The Kuadrant profile (v1.5: RateLimitPolicy, TokenRateLimitPolicy, AuthPolicy; DNSPolicy and
// TLSPolicy in direct.go), from github.com/kuadrant/kuadrant-operator v1.5.2:
//
//   - api/v1/merge_strategies.go: EffectivePolicyForPath folds the policies of a path from the
//     most specific up, as docs/spec.md §5 does (AtomicDefaultsMergeStrategy, AtomicOverridesMergeStrategy);
//     "merge" (PolicyRuleDefaultsMergeStrategy, PolicyRuleOverridesMergeStrategy) works on the
//     policy's rules as Rules() lists them, each kept or replaced whole, never merged inside.
//   - api/v1/ratelimitpolicy_types.go Rules(), and api/v1alpha1/tokenratelimitpolicy_types.go
//     Rules() alike: the top-level `when` predicates and each named limit under `limits`.
//   - api/v1/authpolicy_types.go Rules(): each named pattern (`patterns`), the top-level `when`,
//     each named rule under `rules.authentication|metadata|authorization|callbacks`,
//     `rules.response.unauthenticated|unauthorized`, and each named entry under
//     `rules.response.success.headers|filters`.

import (
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics/gep"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// Profile is the Kuadrant profile.
type Profile struct{}

// kuadrantUnits are the paths (in the spec proper) of the rules a Kuadrant merge keeps or
// replaces whole, per policy kind; "*" is any name. `when` is a list, replaced whole anyway.
var kuadrantUnits = map[string][]string{
	"RateLimitPolicy":      {"limits.*"},
	"TokenRateLimitPolicy": {"limits.*"},
	"AuthPolicy": {
		"patterns.*",
		"rules.authentication.*", "rules.metadata.*", "rules.authorization.*", "rules.callbacks.*",
		"rules.response.unauthenticated", "rules.response.unauthorized",
		"rules.response.success.headers.*", "rules.response.success.filters.*",
	},
}

// Name implements semantics.Profile.
func (Profile) Name() string { return semantics.Kuadrant }

// MergeSchema implements semantics.Profile.
func (Profile) MergeSchema(kind string, s *apiextv1.JSONSchemaProps, _ string) *merge.Schema {
	m := merge.Compile(s)
	for _, path := range kuadrantUnits[kind] {
		m = merge.WithPath(m, semantics.PathParts(path), func(n *merge.Schema) { n.Atomic = true })
	}
	return m
}

// ReportedStrategy implements semantics.Profile.
func (Profile) ReportedStrategy(_ string, e *semantics.Entry) v1alpha1.MergeStrategy {
	return e.Strategy
}

// Flavor implements semantics.Profile.
func (Profile) Flavor(string, topology.NodeID) string { return "" }

// Rule implements semantics.Profile.
func (Profile) Rule(kind string) string {
	if _, ok := kuadrantUnits[kind]; !ok {
		return ""
	}
	return "Kuadrant: a merge keeps or replaces whole named rules (limits, auth rules), never fields inside them"
}

// Fold is docs/spec.md §5.4's; the units of mergeSchema make a merge replace whole named rules.
func (Profile) Fold(es []semantics.FoldEntry, _ string) semantics.FoldValue {
	return semantics.FoldValue{Acc: gep.Fold(es)}
}

// UnnamedRuleSections (semantics.Profile): policy-machinery, which kuadrant-operator builds its topology with,
// names HTTPRoute rules rule-<index+1> (github.com/kuadrant/policy-machinery v0.8.0,
// machinery/gateway_api_topology.go httpRouteRulesFromHTTPRouteFunc).
func (Profile) UnnamedRuleSections() bool { return true }

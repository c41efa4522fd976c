package kuadrant

import (
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics/gep"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// The rows follow kuadrant-operator v1.5.2's calculateEffectivePolicies (a path per
// HTTPRouteRule and GRPCRouteRule for RateLimitPolicy and AuthPolicy, per HTTPRouteRule for
// TokenRateLimitPolicy) and policy-machinery v0.8.0's HTTPRouteRulesFromHTTPRouteFunc (an
// unnamed rule is rule-<index+1>, a section like a named one).
func TestRulesCover(t *testing.T) {
	route := &topology.Route{Rules: []topology.Rule{{Section: "a"}, {Section: "rule-2", Unnamed: true}}}
	for _, tc := range []struct {
		name     string
		p        semantics.Profile
		kind     string
		r        *topology.Route
		sections []string
		want     bool
	}{
		{"every rule, one unnamed, bears a policy", Profile{}, "RateLimitPolicy", route, []string{"a", "rule-2"}, true},
		{"AuthPolicy too", Profile{}, "AuthPolicy", route, []string{"a", "rule-2"}, true},
		{"TokenRateLimitPolicy too", Profile{}, "TokenRateLimitPolicy", route, []string{"a", "rule-2"}, true},
		{"a section that is no rule does not stand for one", Profile{}, "RateLimitPolicy", route, []string{"a", "b"}, false},
		{"the unnamed rule bears none", Profile{}, "RateLimitPolicy", route, []string{"a"}, false},
		{"no section bears one", Profile{}, "RateLimitPolicy", route, nil, false},
		{"a route without rules keeps its context", Profile{}, "RateLimitPolicy", &topology.Route{}, []string{"a"}, false},
		{"not a route", Profile{}, "RateLimitPolicy", nil, []string{"a"}, false},
		{"a Direct kind", Profile{}, "DNSPolicy", route, []string{"a", "rule-2"}, false},
		{"a kind of a descriptor of its own", Profile{}, "ExamplePolicy", route, []string{"a", "rule-2"}, false},
		{"the GEP profile keeps the whole route", gep.Profile{}, "RateLimitPolicy", route, []string{"a", "rule-2"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := semantics.RulesCover(tc.p, tc.kind, tc.r, tc.sections); got != tc.want {
				t.Errorf("RulesCover = %v, want %v", got, tc.want)
			}
		})
	}
}

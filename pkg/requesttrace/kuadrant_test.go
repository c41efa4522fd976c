package requesttrace

import (
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// rlpCRD is an open-schema RateLimitPolicy CRD: the built-in descriptor gives the kind the
// Kuadrant profile, which folds per route rule only (semantics.RuleContexts).
const rlpCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ratelimitpolicies.kuadrant.io}
spec:
  group: kuadrant.io
  names: {kind: RateLimitPolicy, plural: ratelimitpolicies}
  scope: Namespaced
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`

// rlp is a RateLimitPolicy of namespace app on route rt (its rule section, when not "")
// with one named limit.
func rlp(name, section, limit string) string {
	ref := `{group: gateway.networking.k8s.io, kind: HTTPRoute, name: rt`
	if section != "" {
		ref += `, sectionName: ` + section
	}
	return "---\napiVersion: kuadrant.io/v1\nkind: RateLimitPolicy\nmetadata: {name: " + name + ", namespace: app}\n" +
		"spec: {targetRef: " + ref + "}, limits: {" + limit + ": {rates: [{limit: 1, window: 1m}]}}}\n"
}

// TestTraceKuadrantRuleContexts: a request to traceTopo's unnamed rule (rule-2) takes that
// rule's entry when a policy names it, else the whole route's; when every rule is named the
// route has no whole-route entry, and the route policy the trace lists is Overridden, as
// kuadrant-operator's per-rule paths say (effective_ratelimit_policies_reconciler.go
// calculateEffectivePolicies).
func TestTraceKuadrantRuleContexts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		policies string
		section  string
		spec     string
		outcome  v1alpha1.Outcome // route-rlp's
	}{
		{"rule-2 named too: its own entry, the route policy Overridden", rlp("route-rlp", "", "route") + rlp("a-rlp", "a", "a") + rlp("two-rlp", "rule-2", "two"),
			"rule-2", `{"limits":{"two":{"rates":[{"limit":1,"window":"1m"}]}}}`, v1alpha1.OutcomeOverridden},
		{"no policy names rule-2: the whole route's entry", rlp("route-rlp", "", "route") + rlp("a-rlp", "a", "a"),
			"", `{"limits":{"route":{"rates":[{"limit":1,"window":"1m"}]}}}`, v1alpha1.OutcomePartiallyEnforced},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t, rlpCRD, traceTopo, tc.policies)
			s, err := Trace(e, onGW(tracedReq("bar.example.com", "/b")), everything(e))
			m := matched(t, s, err, "rt", 1, "")
			var p *v1alpha1.TracePolicy
			for i := range m.Policies {
				if m.Policies[i].Kind == "RateLimitPolicy" && m.Policies[i].Backend == nil {
					p = &m.Policies[i]
				}
			}
			if p == nil {
				t.Fatalf("no RateLimitPolicy in %+v", m.Policies)
			}
			if p.SectionName != tc.section || string(p.Spec.Raw) != tc.spec {
				t.Errorf("entry of section %q %s, want %q %s", p.SectionName, p.Spec.Raw, tc.section, tc.spec)
			}
			var outcome v1alpha1.Outcome
			for _, src := range p.Sources {
				if src.Name == "route-rlp" {
					outcome = src.Outcome
				}
			}
			if outcome != tc.outcome {
				t.Errorf("route-rlp %q, want %q", outcome, tc.outcome)
			}
		})
	}
}

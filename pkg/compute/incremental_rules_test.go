package compute

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// TestIncrementalRulesCover: Kuadrant folds per route rule only (semantics.RuleContexts), so a
// route gets no whole-route entry of a kind once every rule, named or not (rule-<index+1>),
// bears a policy of the kind, and gets it back when a rule bears none again. Policies and
// rules come and go one at a time; after each step the engine must equal a full
// recomputation, return every key whose output changed, and show route-0's whole-route
// RateLimitPolicy entry, and the route policy's outcome, as Kuadrant's paths say.
func TestIncrementalRulesCover(t *testing.T) {
	topo, _ := genTopology(genSpec{namespaces: 1, gatewaysPerNS: 1, routesPerGW: 2, servicesPerNS: 1})
	topo = append(topo, descriptorCRDs(t, "kuadrant.io")...)
	rlp := func(name string, sec int, target map[string]interface{}, limit int64) *unstructured.Unstructured {
		return profileCreatedAt(u("kuadrant.io/v1", "RateLimitPolicy", "ns-0", name, map[string]interface{}{
			"targetRef": target,
			"limits": map[string]interface{}{
				"global": map[string]interface{}{"rates": []interface{}{map[string]interface{}{"limit": limit, "window": "1m"}}},
			},
		}), sec)
	}
	route := ref(topology.GatewayGroup, "HTTPRoute", "route-0")
	rule := func(name string) map[string]interface{} {
		r := ref(topology.GatewayGroup, "HTTPRoute", "route-0")
		r["sectionName"] = name
		return r
	}
	e, cur := feedIncremental(t, topo, []*unstructured.Unstructured{rlp("rlp-route", 1, route, 10)})
	routeGK := schema.GroupKind{Group: topology.GatewayGroup, Kind: "HTTPRoute"}
	r0 := cur[objKey{routeGK, "ns-0", "route-0"}]
	withRule := r0.DeepCopy() // a third rule, unnamed: rule-3
	rules, _, _ := unstructured.NestedSlice(withRule.Object, "spec", "rules")
	_ = unstructured.SetNestedSlice(withRule.Object, append(rules, map[string]interface{}{}), "spec", "rules")
	rlpGK := schema.GroupKind{Group: "kuadrant.io", Kind: "RateLimitPolicy"}
	for _, tc := range []struct {
		m     mutation
		whole bool
		want  v1alpha1.Outcome // rlp-route's outcome on route-0
	}{
		{mutation{name: "a policy on rule main", upsert: []*unstructured.Unstructured{rlp("rlp-main", 2, rule("main"), 2)}}, true, v1alpha1.OutcomePartiallyEnforced},
		{mutation{name: "a policy on rule shared: every rule has one", upsert: []*unstructured.Unstructured{rlp("rlp-shared", 3, rule("shared"), 3)}}, false, v1alpha1.OutcomeOverridden},
		{mutation{name: "the route gets an unnamed third rule", upsert: []*unstructured.Unstructured{withRule}}, true, v1alpha1.OutcomePartiallyEnforced},
		{mutation{name: "a policy names it rule-3", upsert: []*unstructured.Unstructured{rlp("rlp-3", 4, rule("rule-3"), 4)}}, false, v1alpha1.OutcomeOverridden},
		{mutation{name: "the third rule goes (rlp-3 names no rule)", upsert: []*unstructured.Unstructured{r0.DeepCopy()}}, false, v1alpha1.OutcomeOverridden},
		{mutation{name: "the policy on rule shared goes", del: []objKey{{rlpGK, "ns-0", "rlp-shared"}}}, true, v1alpha1.OutcomePartiallyEnforced},
	} {
		checkMutations(t, e, cur, snapshot(t, e), []mutation{tc.m})
		whole, outcome := routeRateLimit(t, e)
		if whole != tc.whole || outcome != tc.want {
			t.Errorf("%s: whole-route entry %v, rlp-route %s; want %v, %s", tc.m.name, whole, outcome, tc.whole, tc.want)
		}
	}
}

// routeRateLimit says whether route-0 of ns-0 has a whole-route RateLimitPolicy entry, and
// rlp-route's outcome there.
func routeRateLimit(t *testing.T, e *Engine) (whole bool, outcome v1alpha1.Outcome) {
	t.Helper()
	o, ok := e.Compute(Key{Namespace: "ns-0", Name: "route-0"})
	if !ok {
		t.Fatal("no output for ns-0/route-0")
	}
	for _, tg := range o.(*v1alpha1.EffectivePolicy).Targets {
		if tg.Kind != "HTTPRoute" {
			continue
		}
		for _, tp := range tg.Policies {
			if tp.Kind != "RateLimitPolicy" {
				continue
			}
			for _, es := range tp.Effective {
				whole = whole || es.SectionName == ""
			}
			for _, s := range tp.Sources {
				if s.Name == "rlp-route" {
					outcome = s.Outcome
				}
			}
		}
	}
	return whole, outcome
}

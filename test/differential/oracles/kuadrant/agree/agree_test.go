package agree

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/oracles/kuadrant/kuadrantoracle"
)

// The matching and reading of Compare, on the shape of test/upstream/kuadrant/rlp-unnamed-rule-section
// (ku08): Kuadrant's path to rule-2 has private-limit from the rule's policy and gateway-limit from
// the Gateway's.
func TestCompareFindsDisagreements(t *testing.T) {
	path := kuadrantoracle.Path{
		ID: "ku08|ku08/gw|ku08/gw#default|ku08/route|ku08/route#rule-2", Kind: "RateLimitPolicy",
		Path: []kuadrantoracle.Node{
			{Kind: "GatewayClass", Name: "ku08"},
			{Kind: "Gateway", Namespace: "ku08", Name: "gw"},
			{Kind: "Listener", Namespace: "ku08", Name: "gw", SectionName: "default"},
			{Kind: "HTTPRoute", Namespace: "ku08", Name: "route"},
			{Kind: "HTTPRouteRule", Namespace: "ku08", Name: "route", SectionName: "rule-2"},
		},
		Rules: map[string]kuadrantoracle.Rule{
			"private-limit": {Source: "ratelimitpolicy.kuadrant.io:ku08/rule-2-rlp"},
			"gateway-limit": {Source: "ratelimitpolicy.kuadrant.io:ku08/gw-rlp"},
		},
	}
	via := []v1alpha1.ObjectReference{{Kind: "Gateway", Name: "gw"}, {Kind: "HTTPRoute", Name: "route"}, {Kind: "HTTPRoute", Name: "route", SectionName: "rule-2"}}
	entry := func(section string, via []v1alpha1.ObjectReference, spec string, sources map[string]string) RouteEntry {
		e := v1alpha1.EffectiveSpec{Via: via, SectionName: section, Spec: runtime.RawExtension{Raw: []byte(spec)}, FieldSources: sources}
		entries, err := OurEntries("RateLimitPolicy", e)
		if err != nil {
			t.Fatal(err)
		}
		return RouteEntry{Namespace: "ku08", Route: "route", Kind: "RateLimitPolicy", Spec: e, Entries: entries}
	}
	spec := `{"limits":{"private-limit":{"rates":[{"limit":2}]},"gateway-limit":{"rates":[{"limit":100}]}}}`
	cases := []struct {
		name string
		ours []RouteEntry
		want []string // the Why of each disagreement, in order
	}{
		{"same entries and sources", []RouteEntry{entry("rule-2", via, spec, map[string]string{"/limits/private-limit/rates": "ku08/rule-2-rlp", "/limits/gateway-limit/rates": "ku08/gw-rlp"})}, nil},
		{"another source", []RouteEntry{entry("rule-2", via, spec, map[string]string{"/limits/private-limit/rates": "ku08/route-rlp", "/limits/gateway-limit/rates": "ku08/gw-rlp"})}, []string{"different entries or sources"}},
		{"an entry missing", []RouteEntry{entry("rule-2", via, `{"limits":{"private-limit":{"rates":[{"limit":2}]}}}`, map[string]string{"/limits/private-limit/rates": "ku08/rule-2-rlp"})}, []string{"different entries or sources"}},
		{"only another rule's entry", []RouteEntry{entry("rule-1", via[:2], spec, nil)}, []string{
			"Kuadrant computes no effective policy on any path of this entry", "the engine has no entry for this path"}},
		// The route-only context (the route through a Gateway without policies) lies on the path
		// too; the context's own entry, with the longer via, is the one compared, wherever it is listed
		// (the other is left over, as no path of this Result is its own).
		{"route-only context listed first", []RouteEntry{
			entry("", via[1:2], `{"limits":{"private-limit":{"rates":[{"limit":2}]}}}`, map[string]string{"/limits/private-limit/rates": "ku08/route-rlp"}),
			entry("", via[:2], spec, map[string]string{"/limits/private-limit/rates": "ku08/rule-2-rlp", "/limits/gateway-limit/rates": "ku08/gw-rlp"}),
		}, []string{"Kuadrant computes no effective policy on any path of this entry"}},
		{"via another Gateway", []RouteEntry{entry("rule-2", []v1alpha1.ObjectReference{{Kind: "Gateway", Name: "gw2"}}, spec, nil)}, []string{
			"Kuadrant computes no effective policy on any path of this entry", "the engine has no entry for this path"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ds := Compare(&kuadrantoracle.Result{Paths: []kuadrantoracle.Path{path}}, c.ours)
			var got []string
			for _, d := range ds {
				got = append(got, d.Why)
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("disagreements %q, want %q", got, c.want)
			}
		})
	}
}

func TestOurEntriesReadsNamedEntries(t *testing.T) {
	cases := []struct {
		kind, spec string
		sources    map[string]string
		want       Entries
		err        string
	}{
		{"RateLimitPolicy", `{"limits":{"a/b":{"rates":[]}},"when":[{"predicate":"x"}]}`, map[string]string{"/limits/a~1b/rates": "ns/p", "/when": "ns/q"},
			Entries{"a/b": "ns/p", topLevelPredicates: "ns/q"}, ""},
		{"AuthPolicy", `{"rules":{"authentication":{"jwt":{}},"response":{"unauthorized":{"code":403},"success":{"filters":{"f":{}}}}},"when":[{}]}`,
			map[string]string{"/rules/response/unauthorized/code": "ns/p", "/when": "ns/q"},
			Entries{"authentication#jwt": "", "response.unauthorized#": "ns/p", "response.success.metadata#f": "", "conditions#": "ns/q"}, ""},
		{"RateLimitPolicy", `{"limits":{"a":{"rates":[{"limit":1}],"counters":[]}}}`, map[string]string{"/limits/a/rates": "ns/p", "/limits/a/counters": "ns/q"},
			nil, "entry a has fields from"},
		{"RateLimitPolicy", `{"limits":{}}`, map[string]string{"/other": "ns/p"}, nil, "belongs to no named entry"},
	}
	for _, c := range cases {
		got, err := OurEntries(c.kind, v1alpha1.EffectiveSpec{Spec: runtime.RawExtension{Raw: []byte(c.spec)}, FieldSources: c.sources})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s %s: error %v, want %q", c.kind, c.spec, err, c.err)
			}
			continue
		}
		if err != nil || !equal(got, c.want) {
			t.Errorf("%s %s: %v %v, want %v", c.kind, c.spec, got, err, c.want)
		}
	}
}

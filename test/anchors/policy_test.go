package anchors

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// policy builds a generated-style policy of kind RetryPolicy from its spec.
func policy(t *testing.T, name string, spec map[string]interface{}) *Policy {
	t.Helper()
	spec["targetRefs"] = []interface{}{map[string]interface{}{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw"}}
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "bench.effectivepolicy.dev/v1", "kind": "RetryPolicy",
		"metadata": map[string]interface{}{"namespace": "ns", "name": name},
		"spec":     spec,
	}}
	p, err := convertPolicy(u, "conditions")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// describe lists rules as "id=value@source-name", sorted.
func describe(r Rules) string {
	var out []string
	for id, rule := range r {
		v := rule.Value
		if m, ok := v.(map[string]interface{}); ok {
			v = m["value"]
		}
		out = append(out, id+"="+v.(string)+"@"+rule.Source[strings.LastIndex(rule.Source, "/")+1:])
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func conds(values ...string) []interface{} {
	var l []interface{}
	for i := 0; i+1 < len(values); i += 2 {
		l = append(l, map[string]interface{}{"name": values[i], "value": values[i+1]})
	}
	return l
}

// TestMerge: a less specific policy (general) merged into a more specific
// one (specific) with general's strategy, as EffectivePolicyForPath does.
func TestMerge(t *testing.T) {
	specific := func() map[string]interface{} {
		return map[string]interface{}{"backoff": "s", "conditions": conds("a", "s")}
	}
	for _, tc := range []struct {
		name    string
		general map[string]interface{}
		want    string
	}{
		{"implicit defaults are atomic: the specific policy stays",
			map[string]interface{}{"backoff": "g", "attempts": "g"},
			"backoff=s@specific conditions/a=s@specific"},
		{"atomic defaults stanza",
			map[string]interface{}{"strategy": "atomic", "defaults": map[string]interface{}{"attempts": "g"}},
			"backoff=s@specific conditions/a=s@specific"},
		{"patch defaults add the rules the specific policy lacks, list items by name",
			map[string]interface{}{"strategy": "patch", "defaults": map[string]interface{}{"attempts": "g", "backoff": "g", "conditions": conds("a", "g", "b", "g")}},
			"attempts=g@general backoff=s@specific conditions/a=s@specific conditions/b=g@general"},
		{"atomic overrides replace everything",
			map[string]interface{}{"overrides": map[string]interface{}{"attempts": "g"}},
			"attempts=g@general"},
		{"patch overrides win their rules and keep the others",
			map[string]interface{}{"overrides": map[string]interface{}{"strategy": "patch", "backoff": "g", "conditions": conds("b", "g")}},
			"backoff=g@general conditions/a=s@specific conditions/b=g@general"},
		{"both stanzas patch: defaults first, then overrides",
			map[string]interface{}{"defaults": map[string]interface{}{"attempts": "gd", "backoff": "gd"}, "overrides": map[string]interface{}{"conditions": conds("a", "go")}},
			"attempts=gd@general backoff=s@specific conditions/a=go@general"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, g := policy(t, "specific", specific()), policy(t, "general", tc.general)
			got := s.Merge(g).(*Policy)
			if d := describe(got.Rules()); d != tc.want {
				t.Errorf("got  %s\nwant %s", d, tc.want)
			}
			if !reflect.DeepEqual(s.Rules(), policy(t, "specific", specific()).Rules()) {
				t.Error("the merge modified the specific policy")
			}
		})
	}
}

// TestAtomicDefaultsOfEmpty: an empty accumulator takes the defaults whole
// (kuadrant's Empty(), our "no non-null keys").
func TestAtomicDefaultsOfEmpty(t *testing.T) {
	g := policy(t, "general", map[string]interface{}{"defaults": map[string]interface{}{"attempts": "g"}})
	empty := &Policy{}
	if d := describe(empty.Merge(g).(*Policy).Rules()); d != "attempts=g@general" {
		t.Errorf("got %s", d)
	}
}

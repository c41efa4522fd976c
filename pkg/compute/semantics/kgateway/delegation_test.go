package kgateway

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// chainPolicy is a policy of a delegation chain's context: the route (p: parent, c: child, g:
// grandparent) or Gateway ("gw") it is attached to, and its spec.
type chainPolicy struct{ name, route, spec string }

// The modes of kgateway.dev/inherited-policy-priority across a delegation chain, as
// pkg/pluginsdk/policy/merge.go GetMergeStrategy and MergePolicies apply them with the merge
// functions of trafficpolicy/merge.go (defaultMerge keeps a set unit under a deep strategy;
// extAuth, extProc and transformation are combined, the parent's first, under
// OverridableDeep). The golden files testutils/outputs/delegation/traffic_policy_*.yaml show the
// shallow modes (test/upstream/kgateway kg13, kg14).
func TestChainModes(t *testing.T) {
	parent := chainPolicy{"parent", "p", `{"rateLimit":{"local":{"tokenBucket":{"maxTokens":1}}},"extAuth":{"extensionRef":{"name":"p"}}}`}
	child := chainPolicy{"child", "c", `{"rateLimit":{"local":{"tokenBucket":{"maxTokens":2}}},"extAuth":{"extensionRef":{"name":"c"}},"cors":{"maxAge":3}}`}
	gw := chainPolicy{"gw", "gw", `{"csrf":{"percentageEnabled":5},"cors":{"maxAge":9}}`}
	for _, tc := range []struct {
		name  string
		modes map[string]string // route -> annotation
		ps    []chainPolicy
		want  map[string]string // pointer -> policy
	}{
		{name: "no annotation: ShallowMergePreferChild", ps: []chainPolicy{gw, parent, child},
			want: map[string]string{"/rateLimit/local/tokenBucket/maxTokens": "child", "/extAuth/extensionRef/name": "child", "/cors/maxAge": "child", "/csrf/percentageEnabled": "gw"}},
		{name: "an unknown value is the default", modes: map[string]string{"p": "PreferParent"}, ps: []chainPolicy{parent, child},
			want: map[string]string{"/rateLimit/local/tokenBucket/maxTokens": "child", "/extAuth/extensionRef/name": "child", "/cors/maxAge": "child"}},
		{name: "ShallowMergePreferParent", modes: map[string]string{"p": shallowPreferParent}, ps: []chainPolicy{gw, parent, child},
			want: map[string]string{"/rateLimit/local/tokenBucket/maxTokens": "parent", "/extAuth/extensionRef/name": "parent", "/cors/maxAge": "child", "/csrf/percentageEnabled": "gw"}},
		{name: "DeepMergePreferParent: only the combined units", modes: map[string]string{"p": deepPreferParent}, ps: []chainPolicy{parent, child},
			want: map[string]string{"/rateLimit/local/tokenBucket/maxTokens": "child", "/extAuth/extensionRef/name": "parent", "/cors/maxAge": "child"}},
		{name: "DeepMergePreferChild", modes: map[string]string{"p": deepPreferChild}, ps: []chainPolicy{parent, child},
			want: map[string]string{"/rateLimit/local/tokenBucket/maxTokens": "child", "/extAuth/extensionRef/name": "child", "/cors/maxAge": "child"}},
		{name: "the child's annotation does not matter", modes: map[string]string{"c": shallowPreferParent}, ps: []chainPolicy{parent, child},
			want: map[string]string{"/rateLimit/local/tokenBucket/maxTokens": "child", "/extAuth/extensionRef/name": "child", "/cors/maxAge": "child"}},
		{name: "each delegating route's own mode, the nearest first",
			modes: map[string]string{"g": shallowPreferParent, "p": shallowPreferChild},
			ps:    []chainPolicy{{"grand", "g", `{"cors":{"maxAge":7}}`}, parent, child},
			want:  map[string]string{"/rateLimit/local/tokenBucket/maxTokens": "child", "/extAuth/extensionRef/name": "child", "/cors/maxAge": "grand"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := chainFold(t, tc.ps, tc.modes)
			if g, w := mustJSONString(t, got), mustJSONString(t, tc.want); g != w {
				t.Errorf("sources %s, want %s", g, w)
			}
		})
	}
}

// chainFold folds ps, each on its route's rule (or the Gateway), the routes in chain order
// g, p, c, as the engine hands them over: the context's nodes from the root.
func chainFold(t *testing.T, ps []chainPolicy, modes map[string]string) map[string]string {
	t.Helper()
	sch := (Profile{}).MergeSchema("TrafficPolicy", nil, "")
	depth := map[string]int{"gw": 0, "g": 1, "p": 2, "c": 3}
	var es []semantics.FoldEntry
	for _, p := range ps {
		var spec map[string]interface{}
		if err := json.Unmarshal([]byte(p.spec), &spec); err != nil {
			t.Fatal(err)
		}
		pol := &semantics.Policy{
			ID:          semantics.PolicyID{GK: schema.GroupKind{Group: group, Kind: "TrafficPolicy"}, Namespace: "ns", Name: p.name},
			DisplayName: "ns/" + p.name,
			Raw:         map[string]interface{}{},
			Entries:     []semantics.Entry{{Spec: spec, Schema: sch}},
		}
		node := topology.NodeID{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "ns", Name: "gw"}
		var ann map[string]string
		if p.route != "gw" {
			node = topology.NodeID{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "ns", Name: p.route, Section: "r"}
			if m, ok := modes[p.route]; ok {
				ann = map[string]string{topology.InheritedPolicyPriorityAnnotation: m}
			}
		}
		es = append(es, semantics.FoldEntry{Policy: pol, Entry: &pol.Entries[0], Node: node, Level: 10 * depth[p.route], NodeAnnotations: ann})
	}
	fv := (Profile{}).Fold(es, "")
	fs := map[string]string{}
	merge.WalkLeaves(fv.Acc, "", func(ptr string, src int) { fs[ptr] = es[src].Policy.ID.Name })
	return fs
}

func mustJSONString(t *testing.T, v interface{}) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

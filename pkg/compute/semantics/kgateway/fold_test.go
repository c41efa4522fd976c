package kgateway

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// foldPolicy is a policy of a context: where it is attached, its spec (JSON) and its
// kgateway.dev/policy-weight ("" for none).
type foldPolicy struct {
	name, node, spec, weight string
}

// levels are the nodes of a route rule's context, least specific first.
var levels = map[string]struct {
	id    topology.NodeID
	level int
}{
	"gw":       {topology.NodeID{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "ns", Name: "gw"}, 1},
	"listener": {topology.NodeID{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "ns", Name: "gw", Section: "http"}, 2},
	"route":    {topology.NodeID{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "ns", Name: "route"}, 3},
	"rule":     {topology.NodeID{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "ns", Name: "route", Section: "rule0"}, 4},
	"svc":      {topology.NodeID{Kind: "Service", Namespace: "ns", Name: "svc"}, 1},
}

// foldOf folds the policies of kind, given established first, as the engine hands them over.
func foldOf(t *testing.T, kind string, ps []foldPolicy) (string, map[string]string) {
	t.Helper()
	sch := (Profile{}).MergeSchema(kind, nil, "")
	var es []semantics.FoldEntry
	for _, p := range ps {
		var spec map[string]interface{}
		if err := json.Unmarshal([]byte(p.spec), &spec); err != nil {
			t.Fatal(err)
		}
		raw := map[string]interface{}{"metadata": map[string]interface{}{}}
		if p.weight != "" {
			raw["metadata"] = map[string]interface{}{"annotations": map[string]interface{}{weightAnnotation: p.weight}}
		}
		pol := &semantics.Policy{
			ID:          semantics.PolicyID{GK: schema.GroupKind{Group: group, Kind: kind}, Namespace: "ns", Name: p.name},
			DisplayName: "ns/" + p.name,
			Raw:         raw,
			Entries:     []semantics.Entry{{Spec: spec, Schema: sch}},
		}
		l := levels[p.node]
		es = append(es, semantics.FoldEntry{Policy: pol, Entry: &pol.Entries[0], Node: l.id, Level: l.level})
	}
	fv := (Profile{}).Fold(es, "")
	b, err := json.Marshal(merge.ToJSON(fv.Acc))
	if err != nil {
		t.Fatal(err)
	}
	fs := map[string]string{}
	merge.WalkLeaves(fv.Acc, "", func(ptr string, src int) { fs[ptr] = es[src].Policy.ID.Name })
	return string(b), fs
}

var foldCases = []struct {
	name, kind string
	policies   []foldPolicy
	want       string
	sources    map[string]string
}{
	{
		name: "rule beats route beats listener beats Gateway, feature by feature",
		kind: "TrafficPolicy",
		policies: []foldPolicy{
			{name: "gw", node: "gw", spec: `{"cors":{"allowOrigins":["gw"]},"buffer":{"maxRequestSize":"1Ki"},"rbac":{"action":"Allow"}}`},
			{name: "listener", node: "listener", spec: `{"buffer":{"maxRequestSize":"2Ki"}}`},
			{name: "route", node: "route", spec: `{"cors":{"allowOrigins":["route"],"maxAge":5},"csrf":{"percentageEnabled":10}}`},
			{name: "rule", node: "rule", spec: `{"cors":{"allowMethods":["GET"]}}`},
		},
		want: `{"buffer":{"maxRequestSize":"2Ki"},"cors":{"allowMethods":["GET"]},"csrf":{"percentageEnabled":10},"rbac":{"action":"Allow"}}`,
		sources: map[string]string{
			"/buffer/maxRequestSize": "listener", "/cors/allowMethods": "rule",
			"/csrf/percentageEnabled": "route", "/rbac/action": "gw",
		},
	},
	{
		name: "at one level the older policy keeps what it sets",
		kind: "TrafficPolicy",
		policies: []foldPolicy{
			{name: "old", node: "route", spec: `{"cors":{"allowOrigins":["old"]}}`},
			{name: "new", node: "route", spec: `{"cors":{"allowOrigins":["new"]},"buffer":{"maxRequestSize":"1Ki"}}`},
		},
		want:    `{"buffer":{"maxRequestSize":"1Ki"},"cors":{"allowOrigins":["old"]}}`,
		sources: map[string]string{"/buffer/maxRequestSize": "new", "/cors/allowOrigins": "old"},
	},
	{
		name: "a heavier policy-weight beats an older policy at one level, not a more specific one",
		kind: "TrafficPolicy",
		policies: []foldPolicy{
			{name: "gw-heavy", node: "gw", spec: `{"csrf":{"percentageEnabled":1},"buffer":{"maxRequestSize":"9Ki"}}`, weight: "100"},
			{name: "old", node: "route", spec: `{"cors":{"allowOrigins":["old"]}}`},
			{name: "new", node: "route", spec: `{"cors":{"allowOrigins":["new"]},"csrf":{"percentageEnabled":2}}`, weight: "5"},
			{name: "bad", node: "route", spec: `{"buffer":{"maxRequestSize":"1Ki"}}`, weight: "x"},
		},
		want:    `{"buffer":{"maxRequestSize":"9Ki"},"cors":{"allowOrigins":["new"]},"csrf":{"percentageEnabled":2}}`,
		sources: map[string]string{"/buffer/maxRequestSize": "gw-heavy", "/cors/allowOrigins": "new", "/csrf/percentageEnabled": "new"},
	},
	{
		name: "local and global rate limits merge apart; a Gateway's timeouts never apply",
		kind: "TrafficPolicy",
		policies: []foldPolicy{
			{name: "gw", node: "gw", spec: `{"rateLimit":{"global":{"extensionRef":{"name":"rl"}}},"timeouts":{"request":"5s"}}`},
			{name: "route", node: "route", spec: `{"rateLimit":{"local":{"tokenBucket":{"maxTokens":99}}}}`},
		},
		want: `{"rateLimit":{"global":{"extensionRef":{"name":"rl"}},"local":{"tokenBucket":{"maxTokens":99}}}}`,
		sources: map[string]string{
			"/rateLimit/global/extensionRef/name": "gw", "/rateLimit/local/tokenBucket/maxTokens": "route",
		},
	},
	{
		name: "ListenerPolicies on one Gateway: each listener setting from the oldest",
		kind: "ListenerPolicy",
		policies: []foldPolicy{
			{name: "a", node: "gw", spec: `{"default":{"perConnectionBufferLimitBytes":10,"httpSettings":{"tracing":{"provider":{"a":1}}}}}`},
			{name: "b", node: "gw", spec: `{"default":{"perConnectionBufferLimitBytes":20,"proxyProtocol":{},"httpSettings":{"tracing":{"spawnUpstreamSpan":true},"idleTimeout":"1s"}}}`},
		},
		want: `{"default":{"httpSettings":{"idleTimeout":"1s","tracing":{"provider":{"a":1}}},"perConnectionBufferLimitBytes":10,"proxyProtocol":{}}}`,
		sources: map[string]string{
			"/default/httpSettings/idleTimeout": "b", "/default/httpSettings/tracing/provider/a": "a",
			"/default/perConnectionBufferLimitBytes": "a", "/default/proxyProtocol": "b",
		},
	},
	{
		name: "BackendConfigPolicies on one Service: each setting from the newest",
		kind: "BackendConfigPolicy",
		policies: []foldPolicy{
			{name: "old", node: "svc", spec: `{"connectTimeout":"1s","loadBalancer":{"roundRobin":{}},"tcpKeepalive":{"keepAliveTime":"5s"}}`},
			{name: "new", node: "svc", spec: `{"connectTimeout":"2s","loadBalancer":{"leastRequest":{"choiceCount":3}}}`},
		},
		want: `{"connectTimeout":"2s","loadBalancer":{"leastRequest":{"choiceCount":3}},"tcpKeepalive":{"keepAliveTime":"5s"}}`,
		sources: map[string]string{
			"/connectTimeout": "new", "/loadBalancer/leastRequest/choiceCount": "new", "/tcpKeepalive/keepAliveTime": "old",
		},
	},
}

func TestFoldFeatureByFeature(t *testing.T) {
	for _, tc := range foldCases {
		t.Run(tc.name, func(t *testing.T) {
			got, fs := foldOf(t, tc.kind, tc.policies)
			if got != tc.want {
				t.Errorf("spec %s, want %s", got, tc.want)
			}
			gs, _ := json.Marshal(fs)
			ws, _ := json.Marshal(tc.sources)
			if string(gs) != string(ws) {
				t.Errorf("fieldSources %s, want %s", gs, ws)
			}
		})
	}
}

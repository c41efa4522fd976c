package nginx

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// foldCase is a policy of a context: where it is attached and its spec (JSON).
type foldCase struct {
	name, node, spec string
	rejected         bool
}

// foldOf folds the policies of kind in order (established first) as the engine hands them over.
func foldOf(t *testing.T, kind string, ps []foldCase) (string, map[string]string) {
	t.Helper()
	nodes := map[string]topology.NodeID{
		"gw":    {Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "ns", Name: "gw"},
		"route": {Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "ns", Name: "route"},
	}
	sch := (Profile{}).MergeSchema(kind, nil, "")
	var es []semantics.FoldEntry
	var first *semantics.Policy
	for _, p := range ps {
		var spec map[string]interface{}
		if err := json.Unmarshal([]byte(p.spec), &spec); err != nil {
			t.Fatal(err)
		}
		pol := &semantics.Policy{
			ID:          semantics.PolicyID{GK: schema.GroupKind{Group: group, Kind: kind}, Namespace: "ns", Name: p.name},
			DisplayName: "ns/" + p.name,
			Entries:     []semantics.Entry{{Spec: spec, Schema: sch}},
		}
		if p.rejected {
			pol.RejectedBy = first
		}
		if first == nil {
			first = pol
		}
		es = append(es, semantics.FoldEntry{Policy: pol, Entry: &pol.Entries[0], Node: nodes[p.node]})
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

// foldCases are contexts of one kind, with the spec and the field sources NGINX's inheritance gives.
var foldCases = []struct {
	name, kind string
	policies   []foldCase
	want       string
	sources    map[string]string
}{
	{
		name: "a route's proxy_buffers replaces the Gateway's whole, the other directives are inherited",
		kind: "ProxySettingsPolicy",
		policies: []foldCase{
			{name: "gw-buffers", node: "gw", spec: `{"buffering":{"bufferSize":"4k","buffers":{"number":8,"size":"4k"}}}`},
			{name: "gw-timeout", node: "gw", spec: `{"timeout":{"connect":"5s"}}`},
			{name: "route", node: "route", spec: `{"buffering":{"buffers":{"number":16}}}`},
		},
		want: `{"buffering":{"bufferSize":"4k","buffers":{"number":16}},"timeout":{"connect":"5s"}}`,
		sources: map[string]string{
			"/buffering/bufferSize": "gw-buffers", "/buffering/buffers/number": "route", "/timeout/connect": "gw-timeout",
		},
	},
	{
		name: "a rejected policy adds nothing",
		kind: "ClientSettingsPolicy",
		policies: []foldCase{
			{name: "first", node: "gw", spec: `{"body":{"maxSize":"1m"}}`},
			{name: "second", node: "gw", spec: `{"body":{"maxSize":"2m"},"keepAlive":{"requests":10}}`, rejected: true},
		},
		want:    `{"body":{"maxSize":"1m"}}`,
		sources: map[string]string{"/body/maxSize": "first"},
	},
	{
		name: "the rate limit rules of a node's policies add up; a route with rules of its own inherits none",
		kind: "RateLimitPolicy",
		policies: []foldCase{
			{name: "gw-a", node: "gw", spec: `{"rateLimit":{"local":{"rules":[{"rate":"10r/s","key":"a"}]},"logLevel":"info","rejectCode":429}}`},
			{name: "gw-b", node: "gw", spec: `{"rateLimit":{"local":{"rules":[{"rate":"20r/s","key":"b"}]}}}`},
			{name: "route-c", node: "route", spec: `{"rateLimit":{"local":{"rules":[{"rate":"1r/m","key":"c"}]},"rejectCode":466}}`},
			{name: "route-d", node: "route", spec: `{"rateLimit":{"local":{"rules":[{"rate":"2r/m","key":"d"}]}}}`},
		},
		want: `{"rateLimit":{"local":{"rules":[{"key":"c","rate":"1r/m"},{"key":"d","rate":"2r/m"}]},"logLevel":"info","rejectCode":466}}`,
		sources: map[string]string{
			"/rateLimit/local/rules/0/key": "route-c", "/rateLimit/local/rules/0/rate": "route-c",
			"/rateLimit/local/rules/1/key": "route-d", "/rateLimit/local/rules/1/rate": "route-d",
			"/rateLimit/logLevel": "gw-a", "/rateLimit/rejectCode": "route-c",
		},
	},
	{
		name: "a route without rules of its own inherits every rule of the Gateway's policies",
		kind: "RateLimitPolicy",
		policies: []foldCase{
			{name: "gw-a", node: "gw", spec: `{"rateLimit":{"local":{"rules":[{"rate":"10r/s","key":"a"}]}}}`},
			{name: "gw-b", node: "gw", spec: `{"rateLimit":{"local":{"rules":[{"rate":"20r/s","key":"b"}]}}}`},
			{name: "route", node: "route", spec: `{"rateLimit":{"local":{"rules":[]},"rejectCode":466}}`},
		},
		want: `{"rateLimit":{"local":{"rules":[{"key":"a","rate":"10r/s"},{"key":"b","rate":"20r/s"}]},"rejectCode":466}}`,
		sources: map[string]string{
			"/rateLimit/local/rules/0/key": "gw-a", "/rateLimit/local/rules/0/rate": "gw-a",
			"/rateLimit/local/rules/1/key": "gw-b", "/rateLimit/local/rules/1/rate": "gw-b",
			"/rateLimit/rejectCode": "route",
		},
	},
	{
		name: "dryRun false writes nothing: the Gateway's true is inherited",
		kind: "RateLimitPolicy",
		policies: []foldCase{
			{name: "gw", node: "gw", spec: `{"rateLimit":{"dryRun":true}}`},
			{name: "route", node: "route", spec: `{"rateLimit":{"dryRun":false,"logLevel":"warn"}}`},
		},
		want:    `{"rateLimit":{"dryRun":true,"logLevel":"warn"}}`,
		sources: map[string]string{"/rateLimit/dryRun": "gw", "/rateLimit/logLevel": "route"},
	},
	{
		name: "dryRun false under nothing stays false",
		kind: "RateLimitPolicy",
		policies: []foldCase{
			{name: "gw", node: "gw", spec: `{"rateLimit":{"logLevel":"info"}}`},
			{name: "route", node: "route", spec: `{"rateLimit":{"dryRun":false}}`},
		},
		want:    `{"rateLimit":{"dryRun":false,"logLevel":"info"}}`,
		sources: map[string]string{"/rateLimit/dryRun": "route", "/rateLimit/logLevel": "gw"},
	},
	{
		name: "every snippet of the Gateway's policies is injected",
		kind: "SnippetsPolicy",
		policies: []foldCase{
			{name: "valid-sp", node: "gw", spec: `{"snippets":[{"context":"http","value":"gzip off;"}]}`},
			{name: "second-sp", node: "gw", spec: `{"snippets":[{"context":"http","value":"gzip_comp_level 2;"}]}`},
		},
		want: `{"snippets":[{"context":"http","value":"gzip off;"},{"context":"http","value":"gzip_comp_level 2;"}]}`,
		sources: map[string]string{
			"/snippets/0/context": "valid-sp", "/snippets/0/value": "valid-sp",
			"/snippets/1/context": "second-sp", "/snippets/1/value": "second-sp",
		},
	},
	{
		name: "a route's WAF bundle replaces the Gateway's whole; its security logs are inherited",
		kind: "WAFPolicy",
		policies: []foldCase{
			{name: "gw", node: "gw", spec: `{"type":"HTTP","policySource":{"httpSource":{"url":"http://b/gw.tgz"},"timeout":"10s"},"securityLogs":[{"destination":{"type":"stderr"}}]}`},
			{name: "route", node: "route", spec: `{"type":"NIM","policySource":{"nimSource":{"url":"http://nim","policyName":"p"}}}`},
		},
		want: `{"policySource":{"nimSource":{"policyName":"p","url":"http://nim"}},"securityLogs":[{"destination":{"type":"stderr"}}],"type":"NIM"}`,
		sources: map[string]string{
			"/policySource/nimSource/policyName": "route", "/policySource/nimSource/url": "route",
			"/securityLogs": "gw", "/type": "route",
		},
	},
}

func TestFoldInheritsPerDirective(t *testing.T) {
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

package envoygateway

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// entry is a fold entry of a policy of kind at node, with spec (JSON) and mergeType named.
func entry(kind, name string, node topology.NodeID, spec, named string) semantics.FoldEntry {
	var s map[string]interface{}
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		panic(err)
	}
	p := &semantics.Policy{ID: semantics.PolicyID{GK: schema.GroupKind{Group: group, Kind: kind}, Namespace: "ns", Name: name}, DisplayName: "ns/" + name}
	return semantics.FoldEntry{Policy: p, Entry: &semantics.Entry{Spec: s, Named: named}, Node: node}
}

func TestFold(t *testing.T) {
	node := func(kind, name, section string) topology.NodeID {
		return topology.NodeID{Group: topology.GatewayGroup, Kind: kind, Namespace: "ns", Name: name, Section: section}
	}
	gw, gwl := node("Gateway", "gw", ""), node("Gateway", "gw", "l")
	ls, lsl := node("ListenerSet", "ls", ""), node("ListenerSet", "ls", "x")
	xls := topology.NodeID{Group: topology.ExperimentalGroup, Kind: "XListenerSet", Namespace: "ns", Name: "xls"}
	httpRoute, tcpRoute, udpRule := node("HTTPRoute", "r", ""), node("TCPRoute", "t", ""), node("UDPRoute", "u", "rule-1")
	const btp, sp = "BackendTrafficPolicy", "SecurityPolicy"
	for _, tc := range []struct {
		name   string
		es     []semantics.FoldEntry
		flavor string
		want   string
	}{
		{"a ListenerSet listener beats its ListenerSet and the Gateway", []semantics.FoldEntry{
			entry(btp, "gw", gw, `{"a":1}`, ""), entry(btp, "ls", ls, `{"b":2}`, ""), entry(btp, "lsl", lsl, `{"c":3}`, ""),
		}, "", `{"c":3}`},
		{"an XListenerSet's entries are not Envoy Gateway's", []semantics.FoldEntry{
			entry(btp, "gw", gw, `{"a":1}`, ""), entry(btp, "xls", xls, `{"b":2}`, ""),
		}, "", `{"a":1}`},
		{"a mergeType route policy merges onto the ListenerSet, not the Gateway", []semantics.FoldEntry{
			entry(btp, "gw", gw, `{"a":1,"b":1}`, ""), entry(btp, "ls", ls, `{"b":2}`, ""), entry(btp, "r", httpRoute, `{"c":3}`, egMergeJSON),
		}, "", `{"b":2,"c":3}`},
		{"a mergeType route policy through a Gateway listener merges onto the listener's", []semantics.FoldEntry{
			entry(btp, "gw", gw, `{"a":1}`, ""), entry(btp, "gwl", gwl, `{"b":2}`, ""), entry(btp, "r", httpRoute, `{"c":3}`, egMergeJSON),
		}, "", `{"b":2,"c":3}`},
		{"TCP: settings one by one, connection from route policies only, HTTP-only fields left out", []semantics.FoldEntry{
			entry(btp, "gw", gw, `{"connection":{"bufferLimit":"1M"},"retry":{"numRetries":3},"dns":{"dnsRefreshRate":"5s"}}`, ""),
			entry(btp, "ls", ls, `{"loadBalancer":{"type":"Random"},"telemetry":{"metrics":{"routeStatName":"s","enableVirtualHostStats":true}}}`, ""),
			entry(btp, "t", tcpRoute, `{"loadBalancer":{"type":"RoundRobin"},"timeout":{"tcp":{"connectTimeout":"1s"}}}`, ""),
		}, flavorBTPTCP, `{"loadBalancer":{"type":"RoundRobin"},"timeout":{"tcp":{"connectTimeout":"1s"}},"dns":{"dnsRefreshRate":"5s"},"telemetry":{"metrics":{"routeStatName":"s"}}}`},
		{"TCP: a route's connection applies", []semantics.FoldEntry{
			entry(btp, "gw", gw, `{"connection":{"bufferLimit":"1M"}}`, ""), entry(btp, "t", tcpRoute, `{"connection":{"bufferLimit":"2M"}}`, ""),
		}, flavorBTPTCP, `{"connection":{"bufferLimit":"2M"}}`},
		{"TCP: a mergeType route policy is merged first, then settings left unset are filled", []semantics.FoldEntry{
			entry(btp, "gw", gw, `{"dns":{"dnsRefreshRate":"5s"}}`, ""),
			entry(btp, "gwl", gwl, `{"timeout":{"http":{"connectionIdleTimeout":"9s"}}}`, ""),
			entry(btp, "t", tcpRoute, `{"timeout":{"tcp":{"connectTimeout":"1s"}}}`, egMergeJSON),
		}, flavorBTPTCP, `{"dns":{"dnsRefreshRate":"5s"},"timeout":{"http":{"connectionIdleTimeout":"9s"},"tcp":{"connectTimeout":"1s"}}}`},
		{"UDP: loadBalancer and dns only", []semantics.FoldEntry{
			entry(btp, "gw", gw, `{"dns":{"dnsRefreshRate":"5s"},"circuitBreaker":{"maxConnections":1}}`, ""),
			entry(btp, "u", udpRule, `{"loadBalancer":{"type":"Random"},"healthCheck":{"panicThreshold":1}}`, ""),
		}, flavorBTPUDP, `{"dns":{"dnsRefreshRate":"5s"},"loadBalancer":{"type":"Random"}}`},
		{"a backend below a UDP route takes the route's flavor from the via", []semantics.FoldEntry{
			entry(btp, "gw", gw, `{"retry":{"numRetries":3}}`, ""), entry(btp, "u", udpRule, `{"loadBalancer":{"type":"Random"}}`, ""),
		}, "", `{"loadBalancer":{"type":"Random"}}`},
		{"SecurityPolicy on TCP: authorization only, from the most specific policy that has it", []semantics.FoldEntry{
			entry(sp, "gw", gw, `{"cors":{"allowOrigins":["a"]},"authorization":{"defaultAction":"Deny"}}`, ""),
			entry(sp, "t", tcpRoute, `{"cors":{"allowOrigins":["b"]}}`, ""),
		}, flavorSPTCP, `{"authorization":{"defaultAction":"Deny"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fv := (Profile{}).Fold(tc.es, tc.flavor)
			got, _ := json.Marshal(merge.ToJSON(merge.StripNulls(fv.Acc)))
			var g, w interface{}
			_ = json.Unmarshal(got, &g)
			if err := json.Unmarshal([]byte(tc.want), &w); err != nil {
				t.Fatal(err)
			}
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			if string(gb) != string(wb) {
				t.Errorf("got %s, want %s", gb, wb)
			}
		})
	}
}

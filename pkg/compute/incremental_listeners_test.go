package compute

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// kuadrantListenerMutations are kuadrantMutations' DNSPolicy and TLSPolicy ones: which of a
// Gateway's listeners they take effect on follows the listeners' hostnames and tls blocks
// (semantics.ListenerReach), so a Gateway change alone must recompute them. gw-1 of ns-0 starts
// with two listeners without hostname (gen_test.go genTopology), where neither kind takes effect.
func kuadrantListenerMutations(get func(gk schema.GroupKind, ns, name string) *unstructured.Unstructured) []mutation {
	gwGK := schema.GroupKind{Group: topology.GatewayGroup, Kind: "Gateway"}
	gw := get(gwGK, "ns-0", "gw-1")
	listeners := func(httpsHost, certNS string) *unstructured.Unstructured {
		g := gw.DeepCopy()
		ls, _, _ := unstructured.NestedSlice(g.Object, "spec", "listeners")
		https := ls[1].(map[string]interface{})
		https["hostname"] = httpsHost
		cert := map[string]interface{}{"name": "cert"}
		if certNS != "" {
			cert["namespace"] = certNS
		}
		https["tls"] = map[string]interface{}{"mode": "Terminate", "certificateRefs": []interface{}{cert}}
		_ = unstructured.SetNestedSlice(g.Object, ls, "spec", "listeners")
		return g
	}
	gwRef := ref(topology.GatewayGroup, "Gateway", "gw-1")
	httpsRef := ref(topology.GatewayGroup, "Gateway", "gw-1")
	httpsRef["sectionName"] = "https"
	issuer := map[string]interface{}{"group": "cert-manager.io", "kind": "Issuer", "name": "issuer"}
	return []mutation{
		{name: "a DNSPolicy and a TLSPolicy on a Gateway whose listeners take neither", upsert: []*unstructured.Unstructured{
			profileCreatedAt(u("kuadrant.io/v1", "DNSPolicy", "ns-0", "dns-gw", map[string]interface{}{
				"targetRef": gwRef, "providerRefs": []interface{}{map[string]interface{}{"name": "creds"}},
			}), 10),
			profileCreatedAt(u("kuadrant.io/v1", "TLSPolicy", "ns-0", "tls-gw", map[string]interface{}{"targetRef": gwRef, "issuerRef": issuer}), 11),
			profileCreatedAt(u("kuadrant.io/v1", "TLSPolicy", "ns-0", "tls-https", map[string]interface{}{"targetRef": httpsRef, "issuerRef": issuer}), 12),
		}},
		{name: "the https listener gets a hostname and a same-namespace certificate", upsert: []*unstructured.Unstructured{listeners("a.example.com", "")}},
		{name: "its certificate moves to another namespace", upsert: []*unstructured.Unstructured{listeners("a.example.com", "ns-1")}},
		{name: "it loses its hostname", upsert: []*unstructured.Unstructured{listeners("", "")}},
		{name: "the listener's TLSPolicy goes", del: []objKey{{schema.GroupKind{Group: "kuadrant.io", Kind: "TLSPolicy"}, "ns-0", "tls-https"}}},
		{name: "the Gateway is as it was", upsert: []*unstructured.Unstructured{gw.DeepCopy()}},
	}
}

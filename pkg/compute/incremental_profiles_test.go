package compute

import (
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// TestIncrementalProfiles is TestIncremental for the implementations' profiles: the mutations
// their rules make non-local (a NGINX Gateway Fabric policy rejected on one Service is rejected
// on all; an Envoy Gateway selector reaching into namespaces whose labels and ReferenceGrants
// decide what it selects; Envoy Gateway's oldest-wins and mergeType; Kuadrant's named rules)
// must return every key whose output changes, and leave the engine equal to a full
// recomputation.
func TestIncrementalProfiles(t *testing.T) {
	topo, pols := genTopology(genSpec{namespaces: 3, gatewaysPerNS: 2, routesPerGW: 3, servicesPerNS: 3, policies: 8})
	for _, g := range fuzzGroups {
		topo = append(topo, descriptorCRDs(t, g)...)
	}
	pols = append(append(append(pols, profilePolicies()...), envoyPatchPolicies()...), proxySettingsPolicies()...)
	e, cur := feedIncremental(t, topo, pols)
	before := snapshot(t, e)
	if want := snapshotAll(t, cur); !reflect.DeepEqual(before, want) {
		t.Fatalf("initial state differs from ComputeAll")
	}
	checkMutations(t, e, cur, before, profileMutations(t, cur))
}

// profilesT0 is the time the creation times of the profiles' policies count from.
var profilesT0 = time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)

// profileCreatedAt sets o's creation time sec seconds after profilesT0.
func profileCreatedAt(o *unstructured.Unstructured, sec int) *unstructured.Unstructured {
	o.SetCreationTimestamp(metav1NewTime(profilesT0.Add(time.Duration(sec) * time.Second)))
	return o
}

// serviceRef refers to the Service named name in the referrer's namespace.
func serviceRef(name string) interface{} { return ref("", "Service", name) }

// profilePolicies are NGINX Gateway Fabric, Envoy Gateway and Kuadrant policies in ns-0 whose
// profiles' rules the mutations of TestIncrementalProfiles exercise.
func profilePolicies() []*unstructured.Unstructured {
	usp := func(name string, sec int, spec map[string]interface{}, targets ...interface{}) *unstructured.Unstructured {
		spec["targetRefs"] = targets
		return profileCreatedAt(u("gateway.nginx.org/v1alpha1", "UpstreamSettingsPolicy", "ns-0", name, spec), sec)
	}
	eg := func(kind, ns, name string, sec int, spec map[string]interface{}) *unstructured.Unstructured {
		return profileCreatedAt(u("gateway.envoyproxy.io/v1alpha1", kind, ns, name, spec), sec)
	}
	gw0 := ref(topology.GatewayGroup, "Gateway", "gw-0")
	listener := ref(topology.GatewayGroup, "Gateway", "gw-0")
	listener["sectionName"] = "http"
	route0 := ref(topology.GatewayGroup, "HTTPRoute", "route-0")
	return []*unstructured.Unstructured{
		usp("usp-a", 1, map[string]interface{}{"zoneSize": "64k"}, serviceRef("svc-0")),
		usp("usp-b", 2, map[string]interface{}{"zoneSize": "128k", "keepAlive": map[string]interface{}{"connections": int64(5)}}, serviceRef("svc-0"), serviceRef("svc-1")),
		usp("usp-c", 3, map[string]interface{}{"keepAlive": map[string]interface{}{"requests": int64(7)}}, serviceRef("svc-1")),
		eg("BackendTrafficPolicy", "ns-0", "btp-gw", 1, map[string]interface{}{"targetRefs": []interface{}{gw0}, "timeout": map[string]interface{}{"http": map[string]interface{}{"requestTimeout": "5s"}}}),
		eg("BackendTrafficPolicy", "ns-0", "btp-listener", 2, map[string]interface{}{"targetRefs": []interface{}{listener}, "retry": map[string]interface{}{"numRetries": int64(2)}}),
		eg("BackendTrafficPolicy", "ns-0", "btp-route", 3, map[string]interface{}{"targetRefs": []interface{}{route0}, "mergeType": "StrategicMerge", "retry": map[string]interface{}{"numRetries": int64(4)}}),
		eg("ClientTrafficPolicy", "ns-0", "ctp-old", 1, map[string]interface{}{"targetRefs": []interface{}{gw0}, "http3": map[string]interface{}{}}),
		eg("ClientTrafficPolicy", "ns-0", "ctp-new", 2, map[string]interface{}{"targetRefs": []interface{}{gw0}, "tcpKeepalive": map[string]interface{}{"probes": int64(3)}}),
		eg("SecurityPolicy", "ns-0", "sp-wide", 1, map[string]interface{}{
			"targetSelectors": []interface{}{map[string]interface{}{
				"group": topology.GatewayGroup, "kind": "HTTPRoute", "matchLabels": map[string]interface{}{"team": "blue"},
				"namespaces": map[string]interface{}{"from": "Selector", "selector": map[string]interface{}{"matchLabels": map[string]interface{}{"idx": "1"}}},
			}},
			"cors": map[string]interface{}{"allowOrigins": []interface{}{"https://example.com"}},
		}),
		profileCreatedAt(u("kuadrant.io/v1", "RateLimitPolicy", "ns-0", "rlp-gw", map[string]interface{}{
			"targetRef": gw0,
			"defaults": map[string]interface{}{"strategy": "merge", "limits": map[string]interface{}{
				"global": map[string]interface{}{"rates": []interface{}{map[string]interface{}{"limit": int64(100), "window": "1m"}}},
			}},
		}), 1),
		profileCreatedAt(u("kuadrant.io/v1", "RateLimitPolicy", "ns-0", "rlp-route", map[string]interface{}{
			"targetRef": route0,
			"limits": map[string]interface{}{
				"global": map[string]interface{}{"rates": []interface{}{map[string]interface{}{"limit": int64(5), "window": "1s"}}, "counters": []interface{}{map[string]interface{}{"expression": "auth.identity.user"}}},
			},
		}), 2),
		// A Kuadrant kind that reaches Gateways and routes but never their backends.
		profileCreatedAt(u("kuadrant.io/v1alpha1", "TokenRateLimitPolicy", "ns-0", "trlp-gw", map[string]interface{}{
			"targetRef": gw0,
			"overrides": map[string]interface{}{"strategy": "merge", "limits": map[string]interface{}{
				"tokens": map[string]interface{}{"rates": []interface{}{map[string]interface{}{"limit": int64(1000), "window": "1h"}}},
			}},
		}), 3),
		profileCreatedAt(u("kuadrant.io/v1alpha1", "TokenRateLimitPolicy", "ns-0", "trlp-route", map[string]interface{}{
			"targetRef": route0,
			"limits": map[string]interface{}{
				"tokens": map[string]interface{}{"rates": []interface{}{map[string]interface{}{"limit": int64(5), "window": "1m"}}, "when": []interface{}{map[string]interface{}{"predicate": "true"}}},
			},
		}), 4),
	}
}

// profileMutations are TestIncrementalProfiles' mutations, in order, made from copies of the
// objects in cur.
func profileMutations(t *testing.T, cur map[objKey]*unstructured.Unstructured) []mutation {
	t.Helper()
	get := func(gk schema.GroupKind, ns, name string) *unstructured.Unstructured {
		o := cur[objKey{gk, ns, name}]
		if o == nil {
			t.Fatalf("no %v %s/%s", gk, ns, name)
		}
		return o.DeepCopy()
	}
	uspGK := schema.GroupKind{Group: "gateway.nginx.org", Kind: "UpstreamSettingsPolicy"}
	btpGK := schema.GroupKind{Group: "gateway.envoyproxy.io", Kind: "BackendTrafficPolicy"}
	ctpGK := schema.GroupKind{Group: "gateway.envoyproxy.io", Kind: "ClientTrafficPolicy"}
	rtGK := schema.GroupKind{Group: topology.GatewayGroup, Kind: "HTTPRoute"}
	nsGK := schema.GroupKind{Kind: "Namespace"}
	grantGK := schema.GroupKind{Group: topology.GatewayGroup, Kind: "ReferenceGrant"}

	var muts []mutation
	add := func(name string, objs ...*unstructured.Unstructured) {
		muts = append(muts, mutation{name: name, upsert: objs})
	}
	// usp-b loses to usp-a on svc-0 and so on svc-1 too: deleting usp-a changes svc-1.
	muts = append(muts, mutation{name: "delete the policy a whole-policy rejection came from", del: []objKey{{uspGK, "ns-0", "usp-a"}}})
	add("re-add it, older", profileCreatedAt(get(uspGK, "ns-0", "usp-a"), 0))
	{
		p := get(uspGK, "ns-0", "usp-b")
		_ = unstructured.SetNestedSlice(p.Object, []interface{}{serviceRef("svc-1")}, "spec", "targetRefs")
		add("retarget the rejected policy away from its conflict", p)
	}
	{
		p := get(uspGK, "ns-0", "usp-c")
		_ = unstructured.SetNestedField(p.Object, int64(9), "spec", "keepAlive", "connections")
		add("overlap on the other Service", p)
	}
	{
		p := get(uspGK, "ns-0", "usp-a")
		_ = unstructured.SetNestedSlice(p.Object, []interface{}{serviceRef("svc-0"), serviceRef("svc-1"), serviceRef("svc-2")}, "spec", "targetRefs")
		add("the oldest policy spreads", p)
	}
	{
		r := get(rtGK, "ns-1", "route-6")
		r.SetLabels(map[string]string{"team": "blue"})
		add("label a route in another namespace (no grant yet)", r)
		add("grant it", u("gateway.networking.k8s.io/v1beta1", "ReferenceGrant", "ns-1", "sp", map[string]interface{}{
			"from": []interface{}{map[string]interface{}{"group": "gateway.envoyproxy.io", "kind": "SecurityPolicy", "namespace": "ns-0"}},
			"to":   []interface{}{map[string]interface{}{"group": topology.GatewayGroup, "kind": "HTTPRoute"}},
		}))
		n := get(nsGK, "", "ns-1")
		n.SetLabels(map[string]string{"idx": "7"})
		add("the namespace's labels no longer match", n)
		n = n.DeepCopy()
		n.SetLabels(map[string]string{"idx": "1"})
		add("they match again", n)
		muts = append(muts, mutation{name: "revoke the grant", del: []objKey{{grantGK, "ns-1", "sp"}}})
	}
	{
		p := get(btpGK, "ns-0", "btp-route")
		unstructured.RemoveNestedField(p.Object, "spec", "mergeType")
		add("route policy without mergeType", p)
		muts = append(muts, mutation{name: "delete the listener policy", del: []objKey{{btpGK, "ns-0", "btp-listener"}}})
	}
	add("the newer ClientTrafficPolicy becomes the oldest", profileCreatedAt(get(ctpGK, "ns-0", "ctp-new"), 0))
	muts = append(muts, kuadrantMutations(get)...)
	muts = append(muts, patchPolicyMutations(get)...)
	return append(muts, proxySettingsMutations(get)...)
}

// psp is an NGINX Gateway Fabric ProxySettingsPolicy in ns-0 created sec seconds after profilesT0.
func psp(name string, sec int, target interface{}, spec map[string]interface{}) *unstructured.Unstructured {
	spec["targetRefs"] = []interface{}{target}
	return profileCreatedAt(u("gateway.nginx.org/v1alpha1", "ProxySettingsPolicy", "ns-0", name, spec), sec)
}

// proxySettingsPolicies are NGINX Gateway Fabric ProxySettingsPolicies: inherited directive by
// directive from the Gateway to its routes, a newer overlapping one rejected everywhere.
func proxySettingsPolicies() []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		psp("psp-gw", 1, ref(topology.GatewayGroup, "Gateway", "gw-0"), map[string]interface{}{
			"timeout": map[string]interface{}{"connect": "5s", "read": "30s"},
		}),
		psp("psp-route", 2, ref(topology.GatewayGroup, "HTTPRoute", "route-0"), map[string]interface{}{
			"timeout": map[string]interface{}{"read": "60s"},
		}),
	}
}

// proxySettingsMutations change a directive, add an overlapping newer policy on two routes (it
// loses on one, so on both) and delete the Gateway's.
func proxySettingsMutations(get func(gk schema.GroupKind, ns, name string) *unstructured.Unstructured) []mutation {
	pspGK := schema.GroupKind{Group: "gateway.nginx.org", Kind: "ProxySettingsPolicy"}
	var muts []mutation
	add := func(name string, objs ...*unstructured.Unstructured) {
		muts = append(muts, mutation{name: name, upsert: objs})
	}
	{
		p := get(pspGK, "ns-0", "psp-route")
		_ = unstructured.SetNestedField(p.Object, "10s", "spec", "timeout", "send")
		add("a route ProxySettingsPolicy sets another directive", p)
	}
	late := psp("psp-late", 5, ref(topology.GatewayGroup, "HTTPRoute", "route-0"), map[string]interface{}{
		"timeout": map[string]interface{}{"read": "90s"},
	})
	_ = unstructured.SetNestedSlice(late.Object, []interface{}{ref(topology.GatewayGroup, "HTTPRoute", "route-0"), ref(topology.GatewayGroup, "HTTPRoute", "route-1")}, "spec", "targetRefs")
	add("a newer overlapping ProxySettingsPolicy on two routes", late)
	return append(muts, mutation{name: "delete the Gateway's ProxySettingsPolicy", del: []objKey{{pspGK, "ns-0", "psp-gw"}}})
}

// envoyPatchPolicies are Envoy Gateway EnvoyPatchPolicies, a kind whose policies all apply, in the
// order of their priority, then age.
func envoyPatchPolicies() []*unstructured.Unstructured {
	epp := func(name string, sec int, priority int64, gw string) *unstructured.Unstructured {
		return profileCreatedAt(u("gateway.envoyproxy.io/v1alpha1", "EnvoyPatchPolicy", "ns-0", name, map[string]interface{}{
			"targetRef": ref(topology.GatewayGroup, "Gateway", gw),
			"type":      "JSONPatch",
			"priority":  priority,
			"jsonPatches": []interface{}{map[string]interface{}{
				"type": "type.googleapis.com/envoy.config.listener.v3.Listener", "name": "ns-0/" + gw + "/http",
				"operation": map[string]interface{}{"op": "add", "path": "/stat_prefix", "value": name},
			}},
		}), sec)
	}
	return []*unstructured.Unstructured{epp("epp-a", 1, 10, "gw-0"), epp("epp-b", 2, 10, "gw-0"), epp("epp-c", 3, -5, "gw-0")}
}

// patchPolicyMutations reorder, move and delete EnvoyPatchPolicies.
func patchPolicyMutations(get func(gk schema.GroupKind, ns, name string) *unstructured.Unstructured) []mutation {
	eppGK := schema.GroupKind{Group: "gateway.envoyproxy.io", Kind: "EnvoyPatchPolicy"}
	var muts []mutation
	add := func(name string, objs ...*unstructured.Unstructured) {
		muts = append(muts, mutation{name: name, upsert: objs})
	}
	{
		p := get(eppGK, "ns-0", "epp-a")
		_ = unstructured.SetNestedField(p.Object, int64(20), "spec", "priority")
		add("an EnvoyPatchPolicy's priority moves it last", p)
	}
	add("the newest EnvoyPatchPolicy becomes the oldest", profileCreatedAt(get(eppGK, "ns-0", "epp-b"), 0))
	{
		p := get(eppGK, "ns-0", "epp-c")
		_ = unstructured.SetNestedField(p.Object, ref(topology.GatewayGroup, "Gateway", "gw-1"), "spec", "targetRef")
		add("an EnvoyPatchPolicy moves to another Gateway", p)
	}
	return append(muts, mutation{name: "delete an EnvoyPatchPolicy", del: []objKey{{eppGK, "ns-0", "epp-a"}}})
}

// kuadrantMutations are profileMutations' Kuadrant ones: named rules, and kinds that reach
// Gateways and routes but no backend.
func kuadrantMutations(get func(gk schema.GroupKind, ns, name string) *unstructured.Unstructured) []mutation {
	rlpGK := schema.GroupKind{Group: "kuadrant.io", Kind: "RateLimitPolicy"}
	trlpGK := schema.GroupKind{Group: "kuadrant.io", Kind: "TokenRateLimitPolicy"}
	var muts []mutation
	add := func(name string, objs ...*unstructured.Unstructured) {
		muts = append(muts, mutation{name: name, upsert: objs})
	}
	{
		p := get(rlpGK, "ns-0", "rlp-gw")
		_ = unstructured.SetNestedField(p.Object, map[string]interface{}{"strategy": "merge", "limits": map[string]interface{}{
			"global": map[string]interface{}{"rates": []interface{}{map[string]interface{}{"limit": int64(1), "window": "1h"}}},
		}}, "spec", "overrides")
		unstructured.RemoveNestedField(p.Object, "spec", "defaults")
		add("Kuadrant defaults become overrides", p)
	}
	{
		p := get(trlpGK, "ns-0", "trlp-gw")
		_ = unstructured.SetNestedField(p.Object, ref(topology.GatewayGroup, "HTTPRoute", "route-1"), "spec", "targetRef")
		add("a TokenRateLimitPolicy moves from the Gateway to another route", p)
	}
	muts = append(muts, mutation{name: "delete the route's TokenRateLimitPolicy", del: []objKey{{trlpGK, "ns-0", "trlp-route"}}})
	return append(muts, kuadrantListenerMutations(get)...)
}

// feedIncremental upserts CRDs first, then everything else, one by one (not in bulk mode), and
// returns the engine and the objects it holds.
func feedIncremental(t *testing.T, topo, pols []*unstructured.Unstructured) (*Engine, map[objKey]*unstructured.Unstructured) {
	t.Helper()
	e, err := NewEngine(Options{})
	if err != nil {
		t.Fatal(err)
	}
	cur := map[objKey]*unstructured.Unstructured{}
	all := append(append([]*unstructured.Unstructured{}, topo...), pols...)
	for _, crds := range []bool{true, false} {
		for _, o := range all {
			if isCRD(o) == crds {
				cur[keyOfObj(o)] = o
				e.Upsert(o)
			}
		}
	}
	return e, cur
}

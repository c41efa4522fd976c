package gen

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// EPP is Envoy Gateway's EnvoyPatchPolicy, whose policies all apply to their
// Gateway in order (priority, then age).
const EPP = "EnvoyPatchPolicy"

// patchPolicyStream keeps EnvoyPatchPolicies on a random source of their
// own: they came to the generator after thousands of seeds were judged,
// and drawing them from the topology's source would change every later
// object of those seeds.
const patchPolicyStream = 0x6570705f73747265

// genPatchPolicies adds up to three EnvoyPatchPolicies, after every other
// object and older than none of them. Each names a Gateway of its own
// namespace (a targetRef is local), now and then with a kind Envoy
// Gateway refuses (a Gateway's name under HTTPRoute or GatewayClass: the
// policy is Invalid on that Gateway). Priorities repeat, so ties fall to
// age; ages follow namespace/name, which is the order egctl's loader (it
// keeps no creationTimestamp) leaves ties in.
func (g *generator) genPatchPolicies() {
	if len(g.gateways) == 0 {
		return
	}
	r := rand.New(rand.NewPCG(g.c.Seed, patchPolicyStream))
	var ps []*unstructured.Unstructured
	for i, n := 0, r.IntN(4); i < n; i++ {
		gw := g.gateways[r.IntN(len(g.gateways))]
		kind := "Gateway"
		if r.Float64() < 0.1 {
			kind = []string{"HTTPRoute", "GatewayClass"}[r.IntN(2)]
		}
		l := gw.listeners[r.IntN(len(gw.listeners))]
		spec := map[string]any{
			"type":      "JSONPatch",
			"targetRef": map[string]any{"group": "gateway.networking.k8s.io", "kind": kind, "name": gw.name},
			"priority":  int64(r.IntN(3) - 1),
			"jsonPatches": []any{map[string]any{
				"type": "type.googleapis.com/envoy.config.listener.v3.Listener",
				"name": fmt.Sprintf("%s/%s/%s", gw.ns, gw.name, l.name),
				"operation": map[string]any{"op": "add", "path": "/stat_prefix",
					"value": fmt.Sprintf("epp-%d", i+1)},
			}},
		}
		ps = append(ps, obj(EGGroup+"/v1alpha1", EPP, gw.ns, fmt.Sprintf("x%02d-epp", i+1), spec))
	}
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].GetNamespace() != ps[j].GetNamespace() {
			return ps[i].GetNamespace() < ps[j].GetNamespace()
		}
		return ps[i].GetName() < ps[j].GetName()
	})
	base := BaseTime.Add(2 * time.Hour)
	for i, p := range ps {
		p.SetCreationTimestamp(metaTime(base.Add(time.Duration(i) * time.Second)))
	}
	g.c.Policies = append(g.c.Policies, ps...)
}

package gen

import (
	"fmt"
	"time"
)

// IstioEnvoyFilter is Istio's EnvoyFilter (networking.istio.io/v1alpha3): every filter that
// reaches a proxy applies, by priority, then the root namespace's first, then age, then
// "<name>.<namespace>" (pilot/pkg/model/push_context.go EnvoyFilters).
const IstioEnvoyFilter = "EnvoyFilter"

// envoyFilterStream keeps EnvoyFilters on a random source of their own, drawn after every
// other object: thousands of Istio seeds were judged before they came, and drawing them from
// the case's source (or TrafficExtensions') would change those seeds' other objects.
const envoyFilterStream = 0x656e766f7966696c

// envoyFilterPriorities are the priorities a filter may set (int32 in the CRD; negative ones run
// before the unset 0): few, so that ties fall to the root namespace, age and name.
var envoyFilterPriorities = []int64{-5, 0, 5, 10}

func init() { IstioGroups[IstioEnvoyFilter] = "networking.istio.io/v1alpha3" }

// genEnvoyFilters adds up to four EnvoyFilters after every other object, placed as the other
// policies are (the case's namespaces or the root namespace): targetRefs (Gateways; Services,
// which EnvoyFilters matches without, so they reach nothing; a Gateway elsewhere or missing), a
// workloadSelector, or nothing (the namespace; the mesh from the root namespace), never two of
// them (the CRD: "only one of targetRefs or workloadSelector can be set"); a priority or none;
// aged at random among themselves, ties included. The policies are sorted by age again.
func (ig *istioGen) genEnvoyFilters() {
	ef := ig.withStream(envoyFilterStream)
	n := ef.pick(5)
	base := BaseTime.Add(time.Hour)
	for k := 1; k <= n; k++ {
		ns, name := ef.place(fmt.Sprintf("ef%d", k))
		spec := ef.envoyFilterSpec(k)
		ef.attach(spec, ns)
		pluralTargetRef(spec)
		if sel, ok := spec["selector"].(map[string]any); ok {
			delete(spec, "selector")
			spec["workloadSelector"] = map[string]any{"labels": sel["matchLabels"]}
		}
		p := obj(IstioGroups[IstioEnvoyFilter], IstioEnvoyFilter, ns, name, spec)
		p.SetCreationTimestamp(metaTime(base.Add(time.Duration(ef.pick(n+2)) * time.Second)))
		ig.c.Policies = append(ig.c.Policies, p)
	}
	sortByAge(ig.c.Policies)
}

// envoyFilterSpec is EnvoyFilter k's spec proper: one HTTP_FILTER patch inserting a filter named
// after it (no match.proxy: a proxy version match decides inside the proxy, not which filters
// reach it), and a priority or none.
func (ig *istioGen) envoyFilterSpec(k int) map[string]any {
	patch := map[string]any{
		"applyTo": "HTTP_FILTER",
		"patch": map[string]any{
			"operation": []string{"INSERT_BEFORE", "INSERT_FIRST", "ADD"}[ig.pick(3)],
			"value":     map[string]any{"name": fmt.Sprintf("ef-%d", k)},
		},
	}
	if ig.chance(0.5) {
		patch["match"] = map[string]any{"context": "GATEWAY"}
	}
	spec := map[string]any{"configPatches": []any{patch}}
	if ig.chance(0.6) {
		spec["priority"] = envoyFilterPriorities[ig.pick(len(envoyFilterPriorities))]
	}
	return spec
}

package scale

// The policies: how many attach at each level, their stanza variants, and
// what each one targets.

import (
	"fmt"
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// levelShares: fraction of the policies attached at each level (the
// GatewayClass gets one policy per kind at most).
var levelShares = []struct {
	level string
	share float64
}{
	{LevelNamespace, 0.10},
	{LevelGateway, 0.04},
	{LevelListener, 0.06},
	{LevelRoute, 0.30},
	{LevelRule, 0.20},
	{LevelService, 0.18},
	{LevelPort, 0.12}, // takes the remainder
}

// Variants of policy stanzas (label VariantLabel), docs/spec.md §5 strategies:
// implicit (AtomicDefaults), defaults-patch (PatchDefaults), overrides
// (AtomicOverrides), overrides-patch (PatchOverrides), both (Patch*),
// defaults-atomic (AtomicDefaults, explicit).
var Variants = []string{"implicit", "defaults-patch", "overrides", "overrides-patch", "both", "defaults-atomic"}

var baseTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// policyCounts spreads the policies over the levels: one per kind at the GatewayClass, the
// rest by levelShares.
func (g *generator) policyCounts() map[string]int {
	counts := map[string]int{}
	rest := g.sz.Policies
	gc := min(len(PolicyKinds), rest)
	counts[LevelGatewayClass] = gc
	rest -= gc
	left := rest
	for i, ls := range levelShares {
		c := int(math.Round(float64(rest) * ls.share))
		if i == len(levelShares)-1 || c > left {
			c = left
		}
		counts[ls.level] = c
		left -= c
	}
	return counts
}

func (g *generator) emit(level, ns string, target map[string]interface{}) {
	k := PolicyKinds[g.p%len(PolicyKinds)]
	variant := Variants[g.rng.IntN(len(Variants))]
	spec := policySpec(k, variant, g.p, g.rng)
	spec["targetRefs"] = []interface{}{target}
	po := obj(PolicyGroup+"/v1", k.Kind, ns, fmt.Sprintf("p-%05d", g.p), spec, map[string]string{LevelLabel: level, VariantLabel: variant})
	po.SetCreationTimestamp(metav1.NewTime(baseTime.Add(time.Duration(g.p) * time.Second)))
	g.add(po)
	g.p++
}

func targetRef(group, kind, name, section string) map[string]interface{} {
	m := map[string]interface{}{"group": group, "kind": kind, "name": name}
	if section != "" {
		m["sectionName"] = section
	}
	return m
}

func (g *generator) policies() {
	sz, rng := g.sz, g.rng
	counts := g.policyCounts()
	for i := 0; i < counts[LevelGatewayClass]; i++ {
		g.emit(LevelGatewayClass, GatewayNamespace(0), targetRef(GatewayGroup, "GatewayClass", GatewayClassName, ""))
	}
	for i := 0; i < counts[LevelNamespace]; i++ {
		// Every gateway namespace first, then app namespaces at random.
		var ns string
		if i < sz.GatewayNamespaces {
			ns = GatewayNamespace(i)
		} else {
			ns = AppNamespace(rng.IntN(sz.AppNamespaces))
		}
		g.emit(LevelNamespace, ns, targetRef("", "Namespace", ns, ""))
	}
	for i := 0; i < counts[LevelGateway]; i++ {
		gw := i % sz.Gateways // every Gateway gets one before any gets two
		g.emit(LevelGateway, g.gwNS(gw), targetRef(GatewayGroup, "Gateway", GatewayName(gw), ""))
	}
	for i := 0; i < counts[LevelListener]; i++ {
		gw := rng.IntN(sz.Gateways)
		g.emit(LevelListener, g.gwNS(gw), targetRef(GatewayGroup, "Gateway", GatewayName(gw), ListenerName(rng.IntN(sz.ListenersPerGateway))))
	}
	for i := 0; i < counts[LevelRoute]; i++ {
		r := rng.IntN(sz.Routes)
		g.emit(LevelRoute, g.appNS(r), targetRef(GatewayGroup, "HTTPRoute", RouteName(r), ""))
	}
	for i := 0; i < counts[LevelRule]; i++ {
		r := rng.IntN(sz.Routes)
		g.emit(LevelRule, g.appNS(r), targetRef(GatewayGroup, "HTTPRoute", RouteName(r), RuleName(rng.IntN(sz.RulesPerRoute))))
	}
	for i := 0; i < counts[LevelService]; i++ {
		s := rng.IntN(sz.Services)
		g.emit(LevelService, g.appNS(s), targetRef("", "Service", ServiceName(s), ""))
	}
	for i := 0; i < counts[LevelPort]; i++ {
		s := rng.IntN(sz.Services)
		port := "http"
		if rng.IntN(4) == 0 {
			port = "metrics"
		}
		g.emit(LevelPort, g.appNS(s), targetRef("", "Service", ServiceName(s), port))
	}
}

package gen

import (
	"fmt"
	"strings"
)

// EGGroup is Envoy Gateway's policy API group.
const EGGroup = "gateway.envoyproxy.io"

// Policy kinds the generator writes.
const (
	BTP = "BackendTrafficPolicy"
	SP  = "SecurityPolicy"
	CTP = "ClientTrafficPolicy"
	EEP = "EnvoyExtensionPolicy"
)

var policyKinds = []string{BTP, BTP, SP, SP, CTP, EEP}

// target is an object a policy may name, with the sections it has.
type target struct {
	kind, ns, name string
	sections       []string
}

func (g *generator) targets(kind string) []target {
	var ts []target
	for _, gw := range g.gateways {
		ts = append(ts, target{"Gateway", gw.ns, gw.name, listenerNames(gw.listeners)})
	}
	for _, s := range g.sets {
		ts = append(ts, target{"ListenerSet", s.ns, s.name, listenerNames(s.listeners)})
	}
	if kind == CTP {
		return ts
	}
	for _, r := range g.routes {
		if kind == SP && (r.kind == "UDPRoute" || r.kind == "TLSRoute") {
			continue // SecurityPolicy's CRD admits no such target
		}
		var named []string
		for _, n := range r.rules {
			if n != "" {
				named = append(named, n)
			}
		}
		ts = append(ts, target{r.kind, r.ns, r.name, named})
	}
	return ts
}

func listenerNames(ls []listener) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.name)
	}
	return out
}

func (g *generator) genPolicies() {
	n := 1 + g.pick(7)
	for i := 0; i < n; i++ {
		g.policyN++
		kind := policyKinds[g.pick(len(policyKinds))]
		ts := g.targets(kind)
		t := ts[g.pick(len(ts))]
		ns := t.ns
		if g.chance(0.05) {
			ns = g.ns[(indexOf(g.ns, t.ns)+1)%len(g.ns)]
		}
		spec := g.policySpec(kind, g.policyN)
		refs, allRoutes := g.policyRefs(ts, t)
		if g.f.TargetSelectors && g.chance(0.1) {
			spec["targetSelectors"] = []any{map[string]any{"kind": t.kind, "group": "gateway.networking.k8s.io",
				"matchLabels": map[string]any{"app": "a"}}}
		} else {
			spec["targetRefs"] = refs
		}
		// The CRDs admit mergeType only when every target is a route.
		if allRoutes && kind != CTP && g.chance(0.35) {
			spec["mergeType"] = []string{"StrategicMerge", "JSONMerge"}[g.pick(2)]
		}
		name := fmt.Sprintf("p%02d-%s", g.policyN, abbrev(kind))
		g.c.Policies = append(g.c.Policies, obj(EGGroup+"/v1alpha1", kind, ns, name, spec))
	}
}

// policyRefs names t, and now and then a second target of its namespace;
// allRoutes says whether every one is a route.
func (g *generator) policyRefs(ts []target, t target) ([]any, bool) {
	refs := []any{g.targetRef(t)}
	allRoutes := isRoute(t.kind)
	if g.chance(0.2) {
		if u := ts[g.pick(len(ts))]; u.ns == t.ns {
			if ref := g.targetRef(u); !sameRef(refs[0], ref) {
				refs = append(refs, ref)
				allRoutes = allRoutes && isRoute(u.kind)
			}
		}
	}
	return refs, allRoutes
}

func (g *generator) targetRef(t target) map[string]any {
	ref := map[string]any{"group": "gateway.networking.k8s.io", "kind": t.kind, "name": t.name}
	if len(t.sections) > 0 && g.chance(0.45) {
		ref["sectionName"] = t.sections[g.pick(len(t.sections))]
	}
	return ref
}

// policySpec sets a random subset (never empty) of the fields the oracle
// compares for kind, each to a value that encodes k.
func (g *generator) policySpec(kind string, k int) map[string]any {
	fields := Fields[kind]
	spec := map[string]any{}
	for len(spec) == 0 || g.chance(0.3) {
		for _, f := range fields {
			if g.chance(0.5) {
				f.Set(spec, k)
			}
		}
		if len(spec) > 0 {
			break
		}
	}
	return spec
}

func isRoute(kind string) bool { return strings.HasSuffix(kind, "Route") }

func abbrev(kind string) string {
	switch kind {
	case BTP:
		return "btp"
	case SP:
		return "sp"
	case CTP:
		return "ctp"
	case EEP:
		return "eep"
	}
	return lower(kind)
}

func lower(s string) string { return strings.ToLower(s) }

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return 0
}

// sameRef says whether two targetRefs name the same target and section:
// Envoy Gateway reports a policy naming one target twice as Conflicted
// with itself while it applies it, a quirk the comparison leaves out
// (docs/differential.md).
func sameRef(a any, b map[string]any) bool {
	m := a.(map[string]any)
	return m["kind"] == b["kind"] && m["name"] == b["name"] && m["sectionName"] == b["sectionName"]
}

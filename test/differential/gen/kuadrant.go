package gen

import (
	"fmt"
	"sort"
	"time"
)

// KuadrantGroup is Kuadrant's policy API group.
const KuadrantGroup = "kuadrant.io"

// Kuadrant policy kinds the generator writes (Features.Kuadrant).
const (
	RLP  = "RateLimitPolicy"
	AP   = "AuthPolicy"
	TRLP = "TokenRateLimitPolicy"
)

var kuadrantKinds = []string{RLP, RLP, AP, AP, TRLP}

// kuadrantEntryNames are the names a policy's limits or rules take: few
// and shared, so that policies on one path name the same entries and the
// merge strategies decide which one stays.
var kuadrantEntryNames = []string{"shared", "e1", "e2"}

// genKuadrantPolicies writes one to six Kuadrant policies, each naming one
// Gateway, listener, route or named route rule of its own namespace (a
// Kuadrant targetRef is local), with implicit defaults, explicit defaults
// or overrides, strategy atomic or merge (or left to the CRD default).
// Every value names its policy: policy k's rates have limit k, its
// predicates compare with 'p<k>'.
func (g *generator) genKuadrantPolicies() {
	k := kuadrantGen{g}
	n := 1 + g.pick(6)
	for i := 0; i < n; i++ {
		g.policyN++
		kind := kuadrantKinds[g.pick(len(kuadrantKinds))]
		ts := k.targets(kind)
		if len(ts) == 0 {
			continue
		}
		t := ts[g.pick(len(ts))]
		ref := map[string]any{"group": "gateway.networking.k8s.io", "kind": t.kind, "name": t.name}
		if len(t.sections) > 0 && g.chance(0.4) {
			ref["sectionName"] = t.sections[g.pick(len(t.sections))]
		}
		spec := map[string]any{"targetRef": ref}
		block := k.block(kind, g.policyN)
		switch g.pick(3) {
		case 0: // implicit defaults: the block's fields at the top of spec
			for k, v := range block {
				spec[k] = v
			}
		case 1:
			k.strategy(block)
			spec["defaults"] = block
		default:
			k.strategy(block)
			spec["overrides"] = block
		}
		version := "v1"
		if kind == TRLP {
			version = "v1alpha1"
		}
		name := fmt.Sprintf("p%02d-%s", g.policyN, kuadrantAbbrev(kind))
		g.c.Policies = append(g.c.Policies, obj(KuadrantGroup+"/"+version, kind, t.ns, name, spec))
	}
}

// kuadrantGen writes the parts of Kuadrant policies (a type of its own,
// so that generator keeps few methods).
type kuadrantGen struct{ g *generator }

func (k kuadrantGen) strategy(block map[string]any) {
	g := k.g
	switch g.pick(3) {
	case 0:
		block["strategy"] = "atomic"
	case 1:
		block["strategy"] = "merge"
	}
}

// targets are the objects kind's CRD admits as a target (Gateway,
// HTTPRoute, and for RateLimitPolicy and AuthPolicy GRPCRoute), with their
// listeners or named rules as sections.
func (k kuadrantGen) targets(kind string) []target {
	g := k.g
	var ts []target
	for _, gw := range g.gateways {
		ts = append(ts, target{"Gateway", gw.ns, gw.name, listenerNames(gw.listeners)})
	}
	for _, r := range g.routes {
		if r.kind != "HTTPRoute" && (r.kind != "GRPCRoute" || kind == TRLP) {
			continue
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

// block is the policy's limits (RateLimitPolicy,
// TokenRateLimitPolicy) or rules (AuthPolicy), never empty, now and then
// with a top-level `when`.
func (k kuadrantGen) block(kind string, n int) map[string]any {
	g := k.g
	pred := func(what string) []any {
		return []any{map[string]any{"predicate": fmt.Sprintf("request.%s != 'p%d'", what, n)}}
	}
	names := k.entryNames()
	block := map[string]any{}
	if kind == AP {
		authz := map[string]any{}
		authn := map[string]any{}
		for _, name := range names {
			if g.chance(0.7) {
				authz[name] = map[string]any{"patternMatching": map[string]any{"patterns": pred("path")}}
			} else {
				authn[name] = map[string]any{"jwt": map[string]any{"issuerUrl": fmt.Sprintf("https://p%d.example.com", n)}}
			}
		}
		rules := map[string]any{}
		if len(authz) > 0 {
			rules["authorization"] = authz
		}
		if len(authn) > 0 {
			rules["authentication"] = authn
		}
		block["rules"] = rules
	} else {
		limits := map[string]any{}
		for _, name := range names {
			limits[name] = map[string]any{"rates": []any{map[string]any{"limit": int64(n), "window": fmt.Sprintf("%ds", n)}}}
		}
		block["limits"] = limits
	}
	if g.chance(0.2) {
		block["when"] = pred("host")
	}
	return block
}

func (k kuadrantGen) entryNames() []string {
	g := k.g
	var out []string
	for len(out) == 0 {
		for _, n := range kuadrantEntryNames {
			if g.chance(0.5) {
				out = append(out, n)
			}
		}
	}
	return out
}

func kuadrantAbbrev(kind string) string {
	switch kind {
	case RLP:
		return "rlp"
	case AP:
		return "ap"
	}
	return "trlp"
}

// kuadrantAges stamps the policies in an order of their own, not their
// names' (Kuadrant reads creationTimestamp: policy-machinery
// ObjectsByCreationTimestamp, oldest first, ties by namespace/name), now
// and then two with the same second, and lists them oldest first.
func (g *generator) kuadrantAges() {
	ps := g.c.Policies
	g.r.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
	at := BaseTime.Add(time.Hour)
	for i, p := range ps {
		if i > 0 && !g.chance(0.15) {
			at = at.Add(time.Second)
		}
		p.SetCreationTimestamp(metaTime(at))
	}
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i].GetCreationTimestamp(), ps[j].GetCreationTimestamp()
		if !a.Equal(&b) {
			return a.Before(&b)
		}
		return ps[i].GetNamespace()+"/"+ps[i].GetName() < ps[j].GetNamespace()+"/"+ps[j].GetName()
	})
}

package gen

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// IstioTrafficExtension is Istio 1.31's TrafficExtension, which WasmPlugins are translated to and
// which Istio orders with them (phase, then priority, then age).
const IstioTrafficExtension = "TrafficExtension"

// trafficExtensionStream keeps TrafficExtensions on a random source of their own: they came to
// the generator after thousands of Istio seeds were judged, and drawing them from the case's
// source would change every later object of those seeds.
const trafficExtensionStream = 0x7465787473747265

func init() { IstioGroups[IstioTrafficExtension] = "extensions.istio.io/v1alpha1" }

// genTrafficExtensions adds up to three TrafficExtensions after every other object: a Wasm
// module or a Lua script, a phase (or none), a priority (or none), named by targetRefs (no
// singular targetRef: its schema has none), a selector, or nothing, aged at random among
// themselves (ties included). The policies are sorted by age again.
func (ig *istioGen) genTrafficExtensions() {
	te := ig.withStream(trafficExtensionStream)
	n := te.pick(4)
	base := BaseTime.Add(time.Hour)
	for k := 1; k <= n; k++ {
		ns, name := te.place(fmt.Sprintf("te%d", k))
		spec := te.trafficExtensionSpec(k)
		te.attach(spec, ns)
		pluralTargetRef(spec)
		p := obj(IstioGroups[IstioTrafficExtension], IstioTrafficExtension, ns, name, spec)
		p.SetCreationTimestamp(metaTime(base.Add(time.Duration(te.pick(n+2)) * time.Second)))
		ig.c.Policies = append(ig.c.Policies, p)
	}
	sortByAge(ig.c.Policies)
}

// trafficExtensionSpec is TrafficExtension k's spec proper; its module or script names it.
func (ig *istioGen) trafficExtensionSpec(k int) map[string]any {
	spec := map[string]any{}
	if ig.chance(0.5) {
		spec["wasm"] = map[string]any{"url": fmt.Sprintf("oci://example.com/te-%d:v1", k)}
	} else {
		spec["lua"] = map[string]any{"inlineCode": fmt.Sprintf("-- te %d\nfunction envoy_on_request(h) end", k)}
	}
	if p := []string{"", "AUTHN", "AUTHZ", "STATS"}[ig.pick(4)]; p != "" {
		spec["phase"] = p
	}
	if ig.chance(0.6) {
		spec["priority"] = int64(ig.pick(4) * 5)
	}
	return spec
}

// withStream is ig drawing from a random source of its own, seeded by the case's seed and stream:
// a kind added after seeds were judged must not change the objects drawn before it.
func (ig *istioGen) withStream(stream uint64) *istioGen {
	own := *ig.generator
	own.r = rand.New(rand.NewPCG(ig.c.Seed, stream))
	return &istioGen{generator: &own, gateways: ig.gateways, gwLabels: ig.gwLabels, services: ig.services}
}

// pluralTargetRef writes a singular targetRef as a one-item targetRefs (the extension kinds'
// schemas have only the plural).
func pluralTargetRef(spec map[string]any) {
	if ref, ok := spec["targetRef"]; ok {
		delete(spec, "targetRef")
		spec["targetRefs"] = []any{ref}
	}
}

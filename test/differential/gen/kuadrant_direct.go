package gen

import (
	"fmt"
	"math/rand/v2"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Kuadrant's Direct policy kinds (Features.Kuadrant): one per target, applied per listener.
const (
	DNS = "DNSPolicy"
	TLS = "TLSPolicy"
)

// kuadrantDirectStream is the second word of the random source of the
// DNSPolicies and TLSPolicies: a source of their own, so that adding them
// left every object of the other kinds the same for every seed.
const kuadrantDirectStream = 0xd1ec7_5eed

// tlsGatewayName names the Gateway of HTTPS and TLS listeners the direct
// policies' source adds: the other Gateways have none a TLSPolicy can use.
const tlsGatewayName = "gw-tls"

// directListener is a listener of the added Gateway: what Kuadrant needs of
// it to write a Certificate (a hostname, a TLS block in mode Terminate
// with certificateRefs of its own namespace: validateGatewayListenerBlock
// in effective_tls_policies_reconciler.go), or one thing of it missing.
type directListener struct {
	protocol, mode string // mode "" leaves it to the CRD default (Terminate)
	hostname       bool
	certRef        string // "", "same" or "other" (namespace)
	noTLS          bool
}

// directListeners are drawn from with weights by repetition: mostly
// listeners Kuadrant writes Certificates for.
var directListeners = []directListener{
	{protocol: "HTTPS", hostname: true, certRef: "same"},
	{protocol: "HTTPS", hostname: true, certRef: "same"},
	{protocol: "HTTPS", mode: "Terminate", hostname: true, certRef: "same"},
	{protocol: "TLS", mode: "Terminate", hostname: true, certRef: "same"},
	{protocol: "HTTPS", certRef: "same"},
	{protocol: "HTTPS", hostname: true, noTLS: true},
	{protocol: "HTTPS", hostname: true, certRef: "other"},
	{protocol: "TLS", mode: "Passthrough", hostname: true},
}

type directGen struct {
	g       *generator
	r       *rand.Rand
	targets []target
	refs    map[string][]map[string]any // kind: the targetRefs written so far
}

// genKuadrantDirect appends to g (a function, not a method: generator has
// as many methods as the shape allows), after every other object, now and then a
// Gateway of HTTPS and TLS listeners and always one to four DNSPolicies
// and TLSPolicies, drawn from a random source of their own. Each names a
// Gateway or one of its listeners (now and then one that does not exist,
// or the target of an earlier policy of its kind); every value names the
// policy (policy k's provider Secret is p<k>-credentials, its weight k,
// its issuer p<k>-issuer). They are aged in an order of their own, now
// and then two in the same second, after the other policies.
func genKuadrantDirect(g *generator) {
	d := &directGen{g: g, r: rand.New(rand.NewPCG(g.c.Seed, kuadrantDirectStream)), refs: map[string][]map[string]any{}}
	for _, gw := range g.gateways {
		d.targets = append(d.targets, target{"Gateway", gw.ns, gw.name, listenerNames(gw.listeners)})
	}
	if d.chance(0.6) {
		d.tlsGateway()
	}
	n := 1 + d.r.IntN(4)
	var ps []*unstructured.Unstructured
	for i := 0; i < n; i++ {
		g.policyN++
		kind := DNS
		if d.chance(0.5) {
			kind = TLS
		}
		ref, ns := d.targetRef(kind)
		spec := d.spec(kind, g.policyN)
		spec["targetRef"] = ref
		abbrev := "dns"
		if kind == TLS {
			abbrev = "tls"
		}
		ps = append(ps, obj(KuadrantGroup+"/v1", kind, ns, fmt.Sprintf("p%02d-%s", g.policyN, abbrev), spec))
	}
	d.r.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
	at := BaseTime.Add(2 * time.Hour)
	for i, p := range ps {
		if i > 0 && !d.chance(0.1) {
			at = at.Add(time.Second)
		}
		p.SetCreationTimestamp(metaTime(at))
	}
	g.c.Policies = append(g.c.Policies, ps...)
}

func (d *directGen) chance(p float64) bool { return d.r.Float64() < p }

// tlsGateway adds Gateway gw-tls of one to three listeners s1.. (ports
// 8443..), stamped a second after the last object of the topology.
func (d *directGen) tlsGateway() {
	g := d.g
	ns := g.ns[0]
	if d.chance(0.25) {
		ns = g.ns[1]
	}
	var names []string
	var specs []any
	for i := 0; i < 1+d.r.IntN(3); i++ {
		name := fmt.Sprintf("s%d", i+1)
		names = append(names, name)
		specs = append(specs, d.listenerSpec(name, int64(8443+i), ns, directListeners[d.r.IntN(len(directListeners))]))
	}
	gw := obj(gwv1, "Gateway", ns, tlsGatewayName, map[string]any{"gatewayClassName": g.prefix, "listeners": specs})
	gw.SetCreationTimestamp(metaTime(BaseTime.Add(time.Duration(len(g.c.Topology)) * time.Second)))
	g.c.Topology = append(g.c.Topology, gw)
	d.targets = append(d.targets, target{"Gateway", ns, tlsGatewayName, names})
}

func (d *directGen) listenerSpec(name string, port int64, ns string, l directListener) map[string]any {
	m := map[string]any{"name": name, "protocol": l.protocol, "port": port,
		"allowedRoutes": map[string]any{"namespaces": map[string]any{"from": "All"}}}
	if l.hostname {
		m["hostname"] = name + ".example.com"
	}
	if l.noTLS {
		return m
	}
	tls := map[string]any{}
	if l.mode != "" {
		tls["mode"] = l.mode
	}
	switch l.certRef {
	case "same":
		tls["certificateRefs"] = []any{map[string]any{"name": "cert-" + name}}
	case "other":
		other := d.g.ns[0]
		if other == ns {
			other = d.g.ns[1]
		}
		tls["certificateRefs"] = []any{map[string]any{"name": "cert-" + name, "namespace": other}}
	}
	m["tls"] = tls
	return m
}

// targetRef names a Gateway or listener for a policy of kind (a TLSPolicy
// mostly gw-tls's), in the Gateway's namespace, which is the policy's: a
// Kuadrant targetRef is local.
func (d *directGen) targetRef(kind string) (map[string]any, string) {
	if prev := d.refs[kind]; len(prev) > 0 && d.chance(0.3) {
		ref := prev[d.r.IntN(len(prev))]
		return copyMap(ref), ref["namespace"].(string)
	}
	t := d.targets[d.r.IntN(len(d.targets))]
	if last := d.targets[len(d.targets)-1]; kind == TLS && last.name == tlsGatewayName && d.chance(0.7) {
		t = last
	}
	ref := map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": t.name}
	switch x := d.r.Float64(); {
	case x < 0.04:
		ref["name"] = "gw-missing"
	case x < 0.08:
		ref["sectionName"] = "missing"
	case x < 0.5:
		ref["sectionName"] = t.sections[d.r.IntN(len(t.sections))]
	}
	kept := copyMap(ref)
	kept["namespace"] = t.ns
	d.refs[kind] = append(d.refs[kind], kept)
	return ref, t.ns
}

func copyMap(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if k != "namespace" {
			out[k] = v
		}
	}
	return out
}

// spec is the policy's spec but its targetRef: every value names policy n.
func (d *directGen) spec(kind string, n int) map[string]any {
	if kind == DNS {
		spec := map[string]any{"providerRefs": []any{map[string]any{"name": fmt.Sprintf("p%d-credentials", n)}}}
		if d.chance(0.5) {
			spec["loadBalancing"] = map[string]any{"weight": int64(n), "geo": fmt.Sprintf("p%d", n), "defaultGeo": d.chance(0.5)}
		}
		return spec
	}
	issuer := map[string]any{"name": fmt.Sprintf("p%d-issuer", n)}
	switch d.r.IntN(3) {
	case 0:
		issuer["kind"] = "ClusterIssuer"
	case 1:
		issuer["kind"] = "Issuer"
	}
	spec := map[string]any{"issuerRef": issuer}
	if d.chance(0.4) {
		spec["commonName"] = fmt.Sprintf("p%d.example.com", n)
	}
	return spec
}

package gen

import (
	"fmt"
	"math/rand/v2"
)

// kgateway's policy kinds besides TrafficPolicy.
const (
	HLP = "HTTPListenerPolicy"
	LP  = "ListenerPolicy"
	BCP = "BackendConfigPolicy"
)

// kgKindsStream seeds the random source of the kinds below: a stream of its
// own, so that adding them left every object the TrafficPolicy generator
// writes for a seed as it was (cases of thousands of seeds were judged).
const kgKindsStream = 0x6b67772d6b696e64

// KgatewayHLPFields are the HTTPListenerPolicy settings the generator sets,
// each merged whole (listenerpolicy/merge_http.go) and each a setting of the
// HTTP connection manager no ListenerPolicy of the generator sets, so that
// the Envoy value names the HTTPListenerPolicy it came from.
var KgatewayHLPFields = []Field{
	{"/xffNumTrustedHops", func(spec map[string]any, k int) { spec["xffNumTrustedHops"] = int64(k) }},
	{"/streamIdleTimeout", func(spec map[string]any, k int) { spec["streamIdleTimeout"] = fmt.Sprintf("%ds", k) }},
}

// KgatewayLPFields are the ListenerPolicy listener settings the generator
// sets (under default, or under one port of perPort), each merged on its own
// (listenerpolicy/merge.go).
var KgatewayLPFields = []Field{
	{"/perConnectionBufferLimitBytes", func(spec map[string]any, k int) { spec["perConnectionBufferLimitBytes"] = int64(k) }},
	{"/httpSettings/maxRequestHeadersKb", func(spec map[string]any, k int) { setNested(spec, "httpSettings", "maxRequestHeadersKb", int64(k)) }},
	{"/httpSettings/idleTimeout", func(spec map[string]any, k int) {
		setNested(spec, "httpSettings", "idleTimeout", fmt.Sprintf("%ds", k))
	}},
}

// KgatewayBCPFields are the BackendConfigPolicy settings the generator sets;
// commonHttpProtocolOptions is replaced whole (protocoloptions.go), so it
// carries one of two sub-fields.
var KgatewayBCPFields = []Field{
	{"/connectTimeout", func(spec map[string]any, k int) { spec["connectTimeout"] = fmt.Sprintf("%ds", k) }},
	{"/perConnectionBufferLimitBytes", func(spec map[string]any, k int) { spec["perConnectionBufferLimitBytes"] = int64(k) }},
	{"/commonHttpProtocolOptions/idleTimeout", func(spec map[string]any, k int) {
		setNested(spec, "commonHttpProtocolOptions", "idleTimeout", fmt.Sprintf("%ds", k))
	}},
	{"/commonHttpProtocolOptions/maxHeadersCount", func(spec map[string]any, k int) {
		setNested(spec, "commonHttpProtocolOptions", "maxHeadersCount", int64(k))
	}},
}

func setNested(spec map[string]any, outer, inner string, v any) {
	m, _ := spec[outer].(map[string]any)
	if m == nil {
		m = map[string]any{}
		spec[outer] = m
	}
	m[inner] = v
}

// kgKinds appends HTTPListenerPolicies and ListenerPolicies on Gateways and
// BackendConfigPolicies on the backend Services, drawn from a random source of
// their own, after every other object: older objects keep their ages, and
// within each kind the order listed is the age order (kgOrder).
func (g kgGenerator) kgKinds(seed uint64) {
	k := kgGenerator{&generator{r: rand.New(rand.NewPCG(seed, kgKindsStream)), f: g.f, prefix: g.prefix, ns: g.ns,
		gateways: g.gateways, services: g.services, policyN: g.policyN, c: g.c}}
	start := len(g.c.Policies)
	for i := k.pick(4); i > 0; i-- {
		k.kgListenerPolicy(HLP, func(spec map[string]any, n int) { k.kgSet(spec, KgatewayHLPFields, n) })
	}
	for i := k.pick(4); i > 0; i-- {
		k.kgListenerPolicy(LP, k.kgLPSpec)
	}
	var services []string
	for _, ns := range g.ns {
		if g.services[ns+"/backend"] {
			services = append(services, ns)
		}
	}
	for i := k.pick(4); i > 0 && len(services) > 0; i-- {
		k.policyN++
		ns := services[k.pick(len(services))]
		spec := map[string]any{"targetRefs": []any{map[string]any{"group": "", "kind": "Service", "name": "backend"}}}
		k.kgSet(spec, KgatewayBCPFields, k.policyN)
		g.c.Policies = append(g.c.Policies, obj(KgatewayGroup+"/v1alpha1", BCP, ns, fmt.Sprintf("p%02d-bcp", k.policyN), spec))
	}
	added := g.c.Policies[start:]
	k.r.Shuffle(len(added), func(i, j int) { added[i], added[j] = added[j], added[i] })
}

// kgListenerPolicy adds one policy of kind on one or two Gateways of a namespace.
func (g kgGenerator) kgListenerPolicy(kind string, fill func(spec map[string]any, n int)) {
	g.policyN++
	gw := g.gateways[g.pick(len(g.gateways))]
	refs := []any{map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": gw.name}}
	if o := g.gateways[g.pick(len(g.gateways))]; g.chance(0.2) && o.ns == gw.ns && o.name != gw.name {
		refs = append(refs, map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": o.name})
	}
	spec := map[string]any{"targetRefs": refs}
	fill(spec, g.policyN)
	suffix := map[string]string{HLP: "hlp", LP: "lp"}[kind]
	g.c.Policies = append(g.c.Policies, obj(KgatewayGroup+"/v1alpha1", kind, gw.ns, fmt.Sprintf("p%02d-%s", g.policyN, suffix), spec))
}

// kgLPSpec fills a ListenerPolicy: default settings, and now and then the
// settings of one port of its first Gateway (perPort replaces default there:
// listener_plugin.go getPolicy).
func (g kgGenerator) kgLPSpec(spec map[string]any, n int) {
	if g.chance(0.75) {
		def := map[string]any{}
		g.kgSet(def, KgatewayLPFields, n)
		spec["default"] = def
	}
	if g.chance(0.4) || spec["default"] == nil {
		name, _ := spec["targetRefs"].([]any)[0].(map[string]any)["name"].(string)
		var ports []int64
		for _, gw := range g.gateways {
			if gw.name == name {
				for _, l := range gw.listeners {
					ports = append(ports, l.port)
				}
			}
		}
		listener := map[string]any{}
		g.kgSet(listener, KgatewayLPFields, n)
		spec["perPort"] = []any{map[string]any{"port": ports[g.pick(len(ports))], "listener": listener}}
	}
}

// kgSet sets each of fields with even chance, at least one, to values naming n.
func (g kgGenerator) kgSet(spec map[string]any, fields []Field, n int) {
	set := false
	for !set {
		for _, f := range fields {
			if g.chance(0.5) {
				f.Set(spec, n)
				set = true
			}
		}
	}
}

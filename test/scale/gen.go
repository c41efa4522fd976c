// Package scale generates synthetic, reproducible Gateway API topologies with
// policies attached at every level of the GEP-713 hierarchy, for benchmarks
// of the EffectivePolicy computation (docs/benchmarks).
//
// Generate is deterministic: the same Options give the same objects, in the
// same order, byte for byte. At Scale 1 ("large") it produces:
//
//   - 3 policy CRDs (group bench.effectivepolicy.dev, labeled
//     gateway.networking.k8s.io/policy: inherited, each declaring an
//     x-kubernetes-list-type: map list), optionally minimal Gateway API CRDs;
//   - 1 GatewayClass;
//   - 10 gateway Namespaces with 100 Gateways of 8 HTTP listeners each;
//   - 1,000 application Namespaces with 20,000 HTTPRoutes (3 named rules,
//     1–2 parentRefs, half of them naming a listener) and 20,000 Services
//     (2 named ports); listeners serve *.bench.example but two: one any
//     hostname, one an internal domain no route uses;
//   - 10 shared Namespaces with 200 Services; every tenth route's first rule
//     also sends to one, allowed by a ReferenceGrant in 4 of 5 application
//     Namespaces (800 grants);
//   - 2,000 mesh (GAMMA) HTTPRoutes under a Service of their namespace (half
//     of them under its port), sending to it and a canary Service;
//   - 5,000 policies of the 3 kinds attached to Namespaces, the GatewayClass,
//     Gateways, listeners, routes, rules, Services and Service ports, with a
//     mix of implicit defaults, defaults and overrides, Atomic and Patch.
//
// Smaller or larger sizes scale every population by Options.Scale (the
// GatewayClass and the 8 listeners per Gateway stay fixed).
package scale

import (
	"fmt"
	"math"
	"math/rand/v2"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// PolicyGroup is the group of the generated policy kinds.
const PolicyGroup = "bench.effectivepolicy.dev"

// PolicyKinds are the three generated policy kinds; each declares one
// list-map (ListMapField) keyed by "name".
var PolicyKinds = []PolicyKind{
	{Kind: "RetryPolicy", Plural: "retrypolicies", ListMapField: "conditions"},
	{Kind: "RateLimitPolicy", Plural: "ratelimitpolicies", ListMapField: "limits"},
	{Kind: "HeaderPolicy", Plural: "headerpolicies", ListMapField: "headers"},
}

// PolicyKind describes one generated policy CRD.
type PolicyKind struct {
	Kind, Plural string
	// ListMapField is the spec field declared x-kubernetes-list-type: map
	// (keys: [name]) at the top level and in the defaults/overrides stanzas.
	ListMapField string
}

// GatewayGroup is the Gateway API group.
const GatewayGroup = "gateway.networking.k8s.io"

// Level names where a policy is attached.
const (
	LevelGatewayClass = "GatewayClass"
	LevelNamespace    = "Namespace"
	LevelGateway      = "Gateway"
	LevelListener     = "Listener"
	LevelRoute        = "HTTPRoute"
	LevelRule         = "Rule"
	LevelService      = "Service"
	LevelPort         = "Port"
)

// Labels the generator puts on every policy: its level and its stanza
// variant, so that benchmarks can pick one.
const (
	LevelLabel   = "bench.effectivepolicy.dev/level"
	VariantLabel = "bench.effectivepolicy.dev/variant"
)

// Options size the topology.
type Options struct {
	// Scale multiplies every population of the large size (1.0). 0 means 1.
	Scale float64
	// Seed of the pseudo-random choices (targets, parents, backends, variants).
	Seed uint64
	// GatewayAPICRDs adds minimal (schema-less) CRDs for GatewayClass,
	// Gateway and HTTPRoute, for fake clients and clusters without the
	// Gateway API installed. Real clusters should install the upstream CRDs.
	GatewayAPICRDs bool
}

// Sizes is what Options resolve to.
type Sizes struct {
	GatewayNamespaces, Gateways, ListenersPerGateway int
	AppNamespaces, Routes, RulesPerRoute, Services   int
	Policies                                         int
	SharedNamespaces, SharedServices, MeshRoutes     int
}

// Large is the large benchmark size (scale 1), the one docs/benchmarks reports.
var Large = Sizes{
	GatewayNamespaces: 10, Gateways: 100, ListenersPerGateway: 8,
	AppNamespaces: 1000, Routes: 20000, RulesPerRoute: 3, Services: 20000,
	Policies:         5000,
	SharedNamespaces: 10, SharedServices: 200, MeshRoutes: 2000,
}

// Sizes returns the populations Options describe.
func (o Options) Sizes() Sizes {
	s := o.Scale
	if s <= 0 {
		s = 1
	}
	n := func(v int) int { return max(1, int(math.Round(float64(v)*s))) }
	return Sizes{
		GatewayNamespaces:   n(Large.GatewayNamespaces),
		Gateways:            n(Large.Gateways),
		ListenersPerGateway: Large.ListenersPerGateway,
		AppNamespaces:       n(Large.AppNamespaces),
		Routes:              n(Large.Routes),
		RulesPerRoute:       Large.RulesPerRoute,
		Services:            n(Large.Services),
		Policies:            n(Large.Policies),
		SharedNamespaces:    n(Large.SharedNamespaces),
		SharedServices:      n(Large.SharedServices),
		MeshRoutes:          n(Large.MeshRoutes),
	}
}

// GatewayNamespace names the i-th Gateway namespace.
func GatewayNamespace(i int) string { return fmt.Sprintf("gw-ns-%d", i) }

// AppNamespace names the i-th application namespace.
func AppNamespace(i int) string { return fmt.Sprintf("app-%d", i) }

// GatewayName names the i-th Gateway.
func GatewayName(i int) string { return fmt.Sprintf("gw-%d", i) }

// ListenerName names a Gateway's i-th listener.
func ListenerName(i int) string { return fmt.Sprintf("l%d", i) }

// RouteName names the i-th HTTPRoute.
func RouteName(i int) string { return fmt.Sprintf("route-%d", i) }

// RuleName names a route's i-th rule.
func RuleName(i int) string { return fmt.Sprintf("rule-%d", i) }

// ServiceName names the i-th Service.
func ServiceName(i int) string { return fmt.Sprintf("svc-%d", i) }

// GatewayClassName is the one GatewayClass.
const GatewayClassName = "bench"

// Generate returns the objects of the topology: CRDs first, then Namespaces,
// the GatewayClass, Gateways, Services, ReferenceGrants, HTTPRoutes (mesh
// routes last) and policies.
func Generate(o Options) []*unstructured.Unstructured {
	g := &generator{sz: o.Sizes(), rng: rand.New(rand.NewPCG(o.Seed, 0x5ca1e)), attach: newAttachRand(o.Seed)}
	g.crds(o.GatewayAPICRDs)
	g.namespaces()
	g.sharedNamespaces()
	g.add(obj(GatewayGroup+"/v1", "GatewayClass", "", GatewayClassName, map[string]interface{}{
		"controllerName": "effectivepolicy.dev/bench",
	}, nil))
	g.gateways()
	g.services()
	g.sharedServices()
	g.referenceGrants()
	g.routes()
	g.meshRoutes()
	g.policies()
	return g.out
}

// generator builds the topology; its random source is consumed in a fixed order (routes,
// then policies), so a seed always gives the same objects.
type generator struct {
	sz     Sizes
	rng    *rand.Rand
	attach *rand.Rand // the attachment-rule shapes' draws (gen_attach.go)
	out    []*unstructured.Unstructured
	p      int // policies emitted
}

func (g *generator) add(u *unstructured.Unstructured) { g.out = append(g.out, u) }

// gwNS: Gateways are spread round-robin over the gateway namespaces.
func (g *generator) gwNS(i int) string { return GatewayNamespace(i % g.sz.GatewayNamespaces) }

// appNS: service s and route r live in namespace s (r) % AppNamespaces.
func (g *generator) appNS(i int) string { return AppNamespace(i % g.sz.AppNamespaces) }

func (g *generator) crds(gatewayAPI bool) {
	if gatewayAPI {
		for _, k := range []struct{ kind, plural, scope string }{
			{"GatewayClass", "gatewayclasses", "Cluster"},
			{"Gateway", "gateways", "Namespaced"},
			{"HTTPRoute", "httproutes", "Namespaced"},
			{"ReferenceGrant", "referencegrants", "Namespaced"},
		} {
			g.add(gatewayCRD(k.kind, k.plural, k.scope))
		}
	}
	for _, k := range PolicyKinds {
		g.add(policyCRD(k))
	}
}

func (g *generator) namespaces() {
	for i := 0; i < g.sz.GatewayNamespaces; i++ {
		g.add(obj("v1", "Namespace", "", GatewayNamespace(i), nil, map[string]string{"bench.effectivepolicy.dev/role": "gateways"}))
	}
	for i := 0; i < g.sz.AppNamespaces; i++ {
		g.add(obj("v1", "Namespace", "", AppNamespace(i), nil, map[string]string{"bench.effectivepolicy.dev/role": "apps", "team": fmt.Sprint("team-", i%20)}))
	}
}

func (g *generator) gateways() {
	for gw := 0; gw < g.sz.Gateways; gw++ {
		var ls []interface{}
		for l := 0; l < g.sz.ListenersPerGateway; l++ {
			li := map[string]interface{}{
				"name":     ListenerName(l),
				"port":     int64(8080 + l),
				"protocol": "HTTP",
				"allowedRoutes": map[string]interface{}{
					"namespaces": map[string]interface{}{"from": "All"},
				},
			}
			if h := listenerHostname(l, g.sz.ListenersPerGateway); h != "" {
				li["hostname"] = h
			}
			ls = append(ls, li)
		}
		g.add(obj(GatewayGroup+"/v1", "Gateway", g.gwNS(gw), GatewayName(gw), map[string]interface{}{
			"gatewayClassName": GatewayClassName,
			"listeners":        ls,
		}, nil))
	}
}

func (g *generator) services() {
	for s := 0; s < g.sz.Services; s++ {
		g.add(obj("v1", "Service", g.appNS(s), ServiceName(s), map[string]interface{}{
			"selector": map[string]interface{}{"app": ServiceName(s)},
			"ports": []interface{}{
				map[string]interface{}{"name": "http", "port": int64(80), "protocol": "TCP", "targetPort": int64(8080)},
				map[string]interface{}{"name": "metrics", "port": int64(9090), "protocol": "TCP", "targetPort": int64(9090)},
			},
		}, map[string]string{"app": ServiceName(s)}))
	}
}

// svcsPerNS is the number of Services of namespace n: n, n+N, n+2N, ... (N = AppNamespaces).
func (g *generator) svcsPerNS(n int) int {
	c := g.sz.Services / g.sz.AppNamespaces
	if n < g.sz.Services%g.sz.AppNamespaces {
		c++
	}
	return c
}

func (g *generator) routes() {
	for r := 0; r < g.sz.Routes; r++ {
		parents := g.routeParents() // parents before rules: the order the seed's draws are in
		rules := g.routeRules(r)
		g.add(obj(GatewayGroup+"/v1", "HTTPRoute", g.appNS(r), RouteName(r), map[string]interface{}{
			"parentRefs": parents,
			"hostnames":  []interface{}{fmt.Sprintf("r%d.%s", r, RouteDomain)},
			"rules":      rules,
		}, map[string]string{"app": RouteName(r)}))
	}
}

// routeParents picks one or two Gateways, each with a listener half of the time.
func (g *generator) routeParents() []interface{} {
	sz := g.sz
	var parents []interface{}
	np := 1 + g.rng.IntN(2)
	first := g.rng.IntN(sz.Gateways)
	for p := 0; p < np && p < sz.Gateways; p++ {
		gw := (first + p*(1+sz.Gateways/2)) % sz.Gateways
		if p > 0 && gw == first { // 2 Gateways: the step wraps around
			gw = (first + 1) % sz.Gateways
		}
		pr := map[string]interface{}{"group": GatewayGroup, "kind": "Gateway", "namespace": g.gwNS(gw), "name": GatewayName(gw)}
		if g.rng.IntN(2) == 0 {
			pr["sectionName"] = ListenerName(g.rng.IntN(sz.ListenersPerGateway))
		}
		parents = append(parents, pr)
	}
	return parents
}

// routeRules gives route r its named rules, each to a Service of the route's namespace.
func (g *generator) routeRules(r int) []interface{} {
	nsIdx := r % g.sz.AppNamespaces
	var rules []interface{}
	nsv := g.svcsPerNS(nsIdx)
	for k := 0; k < g.sz.RulesPerRoute; k++ {
		rule := map[string]interface{}{
			"name": RuleName(k),
			"matches": []interface{}{map[string]interface{}{
				"path": map[string]interface{}{"type": "PathPrefix", "value": fmt.Sprintf("/r%d/%s", r, RuleName(k))},
			}},
		}
		if nsv > 0 {
			svc := nsIdx + g.sz.AppNamespaces*g.rng.IntN(nsv)
			rule["backendRefs"] = []interface{}{map[string]interface{}{"name": ServiceName(svc), "port": int64(80)}}
		}
		if k == 0 {
			if shared := g.sharedBackend(r); shared != nil {
				refs, _ := rule["backendRefs"].([]interface{})
				rule["backendRefs"] = append(refs, shared)
			}
		}
		rules = append(rules, rule)
	}
	return rules
}

// Plural resource names of the generated kinds.
var plurals = map[schema.GroupKind]string{
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: "customresourcedefinitions",
	{Kind: "Namespace"}:                           "namespaces",
	{Kind: "Service"}:                             "services",
	{Group: GatewayGroup, Kind: "GatewayClass"}:   "gatewayclasses",
	{Group: GatewayGroup, Kind: "Gateway"}:        "gateways",
	{Group: GatewayGroup, Kind: "HTTPRoute"}:      "httproutes",
	{Group: GatewayGroup, Kind: "ReferenceGrant"}: "referencegrants",
}

func init() {
	for _, k := range PolicyKinds {
		plurals[schema.GroupKind{Group: PolicyGroup, Kind: k.Kind}] = k.Plural
	}
}

// Resource returns the resource of a generated object (for clients and
// object trackers).
func Resource(u *unstructured.Unstructured) schema.GroupVersionResource {
	gvk := u.GroupVersionKind()
	return gvk.GroupVersion().WithResource(plurals[gvk.GroupKind()])
}

// ListKinds maps every resource of the generated objects to its list kind
// (for k8s.io/client-go/dynamic/fake).
func ListKinds() map[schema.GroupVersionResource]string {
	out := map[schema.GroupVersionResource]string{}
	for gk, plural := range plurals {
		v := "v1"
		out[schema.GroupVersionResource{Group: gk.Group, Version: v, Resource: plural}] = gk.Kind + "List"
	}
	return out
}

// Count returns the number of objects per kind, and policies per level
// (keys "policies/<level>") and per variant ("variants/<variant>").
func Count(objs []*unstructured.Unstructured) map[string]int {
	c := map[string]int{}
	for _, o := range objs {
		c[o.GetKind()]++
		if o.GroupVersionKind().Group == PolicyGroup {
			c["policies"]++
			c["policies/"+o.GetLabels()[LevelLabel]]++
			c["variants/"+o.GetLabels()[VariantLabel]]++
		}
		switch o.GetKind() {
		case "Gateway":
			l, _, _ := unstructured.NestedSlice(o.Object, "spec", "listeners")
			c["listeners"] += len(l)
		case "HTTPRoute":
			r, _, _ := unstructured.NestedSlice(o.Object, "spec", "rules")
			c["rules"] += len(r)
			p, _, _ := unstructured.NestedSlice(o.Object, "spec", "parentRefs")
			c["parentRefs"] += len(p)
			for _, pr := range p {
				if m, _ := pr.(map[string]interface{}); m["kind"] == "Service" {
					c["meshRoutes"]++
				}
			}
			for _, ru := range r {
				brs, _, _ := unstructured.NestedSlice(ru.(map[string]interface{}), "backendRefs")
				for _, br := range brs {
					if m, _ := br.(map[string]interface{}); m["namespace"] != nil {
						c["crossNamespaceBackends"]++
					}
				}
			}
		case "Service":
			p, _, _ := unstructured.NestedSlice(o.Object, "spec", "ports")
			c["ports"] += len(p)
		}
	}
	return c
}

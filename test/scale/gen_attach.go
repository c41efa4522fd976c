package scale

import (
	"fmt"
	"math/rand/v2"
)

// The shapes of the Gateway API's attachment rules (docs/spec.md §3): listener
// hostnames, backends in shared namespaces behind ReferenceGrants, and mesh
// (GAMMA) routes. Their choices are drawn from a random source of their own
// (generator.attach), so the base topology's draws, and with them the
// objects earlier benchmark runs used, stay as they were.

// SharedNamespace names the i-th namespace of shared Services.
func SharedNamespace(i int) string { return fmt.Sprintf("shared-%d", i) }

// SharedServiceName names the i-th shared Service (in SharedNamespace(i % SharedNamespaces)).
func SharedServiceName(i int) string { return fmt.Sprintf("shared-svc-%d", i) }

// MeshRouteName names the i-th mesh HTTPRoute.
func MeshRouteName(i int) string { return fmt.Sprintf("mesh-%d", i) }

// RouteDomain is the domain every generated route hostname is under.
const RouteDomain = "bench.example"

// crossNamespaceEvery: one route in this many sends its first rule's traffic
// to a shared Service too; grantlessEvery: one application namespace in this
// many has no ReferenceGrant, so its routes' shared backends hang nowhere.
const (
	crossNamespaceEvery = 10
	grantlessEvery      = 5
)

func newAttachRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0xa77ac4)) }

// InternalListener is the listener whose hostname no generated route
// intersects (listenerHostname).
var InternalListener = ListenerName(Large.ListenersPerGateway - 1)

// listenerHostname: most listeners serve the routes' wildcard domain, one
// serves every hostname (none set), and the last an internal domain no
// generated route uses, so a route naming it by sectionName has no path
// through that Gateway.
func listenerHostname(l, n int) string {
	switch l {
	case n - 1:
		return "*.internal." + RouteDomain
	case n - 2:
		return ""
	}
	return "*." + RouteDomain
}

func (g *generator) sharedNamespaces() {
	for i := 0; i < g.sz.SharedNamespaces; i++ {
		g.add(obj("v1", "Namespace", "", SharedNamespace(i), nil, map[string]string{"bench.effectivepolicy.dev/role": "shared"}))
	}
}

// sharedNS: application namespace a sends to the shared Services of one shared namespace.
func (g *generator) sharedNS(appNSIdx int) int { return appNSIdx % g.sz.SharedNamespaces }

func (g *generator) sharedServices() {
	for s := 0; s < g.sz.SharedServices; s++ {
		g.add(obj("v1", "Service", SharedNamespace(s%g.sz.SharedNamespaces), SharedServiceName(s), map[string]interface{}{
			"selector": map[string]interface{}{"app": SharedServiceName(s)},
			"ports":    []interface{}{map[string]interface{}{"name": "http", "port": int64(80), "protocol": "TCP", "targetPort": int64(8080)}},
		}, map[string]string{"app": SharedServiceName(s)}))
	}
}

// referenceGrants: each application namespace but one in grantlessEvery may
// send its routes to the Services of its shared namespace (ReferenceGrant's
// from holds at most 16 entries, so a grant per namespace, as teams do).
func (g *generator) referenceGrants() {
	for a := 0; a < g.sz.AppNamespaces; a++ {
		if a%grantlessEvery == 0 {
			continue
		}
		g.add(obj(GatewayGroup+"/v1", "ReferenceGrant", SharedNamespace(g.sharedNS(a)), "from-"+AppNamespace(a), map[string]interface{}{
			"from": []interface{}{map[string]interface{}{"group": GatewayGroup, "kind": "HTTPRoute", "namespace": AppNamespace(a)}},
			"to":   []interface{}{map[string]interface{}{"group": "", "kind": "Service"}},
		}, nil))
	}
}

// sharedBackend is the extra backendRef of route r's first rule, or nil.
func (g *generator) sharedBackend(r int) map[string]interface{} {
	if r%crossNamespaceEvery != 0 || g.sz.SharedServices == 0 {
		return nil
	}
	k := g.sharedNS(r % g.sz.AppNamespaces)
	n := g.sz.SharedServices / g.sz.SharedNamespaces
	if k < g.sz.SharedServices%g.sz.SharedNamespaces {
		n++
	}
	if n == 0 {
		return nil
	}
	svc := k + g.sz.SharedNamespaces*g.attach.IntN(n)
	return map[string]interface{}{"name": SharedServiceName(svc), "namespace": SharedNamespace(k), "port": int64(80), "weight": int64(10)}
}

// meshRoutes: producer routes of the mesh, each under a Service of its
// namespace (half of them under its http port), splitting traffic between
// that Service and another one (a canary).
func (g *generator) meshRoutes() {
	for m := 0; m < g.sz.MeshRoutes; m++ {
		nsIdx := m % g.sz.AppNamespaces
		nsv := g.svcsPerNS(nsIdx)
		if nsv == 0 {
			continue
		}
		svc := nsIdx + g.sz.AppNamespaces*g.attach.IntN(nsv)
		canary := nsIdx + g.sz.AppNamespaces*g.attach.IntN(nsv)
		parent := map[string]interface{}{"group": "", "kind": "Service", "name": ServiceName(svc)}
		if g.attach.IntN(2) == 0 {
			parent["port"] = int64(80)
		}
		backends := []interface{}{map[string]interface{}{"name": ServiceName(svc), "port": int64(80), "weight": int64(90)}}
		if canary != svc {
			backends = append(backends, map[string]interface{}{"name": ServiceName(canary), "port": int64(80), "weight": int64(10)})
		}
		g.add(obj(GatewayGroup+"/v1", "HTTPRoute", AppNamespace(nsIdx), MeshRouteName(m), map[string]interface{}{
			"parentRefs": []interface{}{parent},
			"rules":      []interface{}{map[string]interface{}{"name": "main", "backendRefs": backends}},
		}, map[string]string{"app": MeshRouteName(m)}))
	}
}

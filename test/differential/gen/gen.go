// Package gen generates random Gateway API topologies with Envoy Gateway
// policies, the same for the same seed (math/rand/v2's PCG with a fixed
// source), as unstructured objects both sides of the differential harness
// read.
//
// Every generated value that a policy sets encodes the policy's index (a
// duration of k seconds, a name ending in -k), so that the value an
// implementation ends up with names the policy it came from.
package gen

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Features says which structures a run may generate: an oracle that cannot
// read one (egctl's loader knows no ListenerSet and keeps no labels) turns
// it off, so that no case is spent on what it cannot judge.
type Features struct {
	ListenerSets    bool
	TargetSelectors bool
	// Kuadrant writes Kuadrant policies (kuadrant.go) instead of Envoy
	// Gateway's, aged in an order of their own.
	Kuadrant bool
	// Istio makes an Istio topology and Istio policies (istio.go) instead.
	Istio bool
	// Kgateway generates kgateway's topologies instead (kgateway.go).
	Kgateway bool
}

// All is every structure the generator knows.
var All = Features{ListenerSets: true, TargetSelectors: true}

// ControllerName is the GatewayClass controller Envoy Gateway's egctl translates for.
const ControllerName = "gateway.envoyproxy.io/gatewayclass-controller"

// BaseTime is the creationTimestamp of the first object; each later one is a second newer.
var BaseTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Case is one generated topology: Topology holds everything but the
// policies, Policies the policies in age order (oldest first).
type Case struct {
	Seed     uint64
	Prefix   string // the GatewayClass name and the prefix of every namespace
	Topology []*unstructured.Unstructured
	Policies []*unstructured.Unstructured
}

// Objects is the topology then the policies.
func (c *Case) Objects() []*unstructured.Unstructured {
	return append(append([]*unstructured.Unstructured(nil), c.Topology...), c.Policies...)
}

type generator struct {
	r        *rand.Rand
	f        Features
	prefix   string
	ns       []string
	gateways []*gateway
	sets     []*listenerSet
	routes   []*route
	services map[string]bool // namespace/name
	policyN  int
	c        *Case
}

type listener struct {
	name, protocol, hostname string
	port                     int64
}

type gateway struct {
	ns, name  string
	listeners []listener
}

type listenerSet struct {
	ns, name  string
	gateway   *gateway
	listeners []listener
}

type route struct {
	kind, ns, name string
	rules          []string // rule names, "" for an unnamed rule
}

// Generate returns the case of seed.
func Generate(seed uint64, f Features) *Case {
	if f.Kgateway {
		return generateKgateway(seed, f)
	}
	prefix := fmt.Sprintf("df%d", seed)
	g := &generator{
		r:        rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)),
		f:        f,
		prefix:   prefix,
		ns:       []string{prefix + "-a", prefix + "-b"},
		services: map[string]bool{},
		c:        &Case{Seed: seed, Prefix: prefix},
	}
	if f.Istio {
		return generateIstio(g)
	}
	g.add(obj("gateway.networking.k8s.io/v1", "GatewayClass", "", prefix,
		map[string]any{"controllerName": ControllerName}))
	for _, ns := range g.ns {
		g.add(obj("v1", "Namespace", "", ns, nil))
	}
	g.genGateways()
	if f.ListenerSets {
		g.genListenerSets()
	}
	g.genRoutes()
	g.genServices()
	if f.Kuadrant {
		g.genKuadrantPolicies()
	} else {
		g.genPolicies()
	}
	g.order()
	if f.Kuadrant {
		g.kuadrantAges()
		// Last, from a random source of their own: the objects above stay those of
		// every seed judged before DNSPolicy and TLSPolicy were generated.
		genKuadrantDirect(g)
	} else {
		g.genPatchPolicies()
	}
	return g.c
}

func (g *generator) add(o *unstructured.Unstructured) {
	g.c.Topology = append(g.c.Topology, o)
}

// order stamps the topology, then sorts the policies by namespace and name and
// stamps them one second apart in that order: egctl's loader keeps no
// creationTimestamp, so Envoy Gateway orders policies of equal age by
// namespace/name (resource.go (*Resources).Sort), and making age follow that
// order gives both sides the same order.
func (g *generator) order() {
	for i, o := range g.c.Topology {
		o.SetCreationTimestamp(metaTime(BaseTime.Add(time.Duration(i) * time.Second)))
	}
	sort.SliceStable(g.c.Policies, func(i, j int) bool {
		a, b := g.c.Policies[i], g.c.Policies[j]
		if a.GetNamespace() != b.GetNamespace() {
			return a.GetNamespace() < b.GetNamespace()
		}
		return a.GetName() < b.GetName()
	})
	base := BaseTime.Add(time.Hour)
	for i, o := range g.c.Policies {
		o.SetCreationTimestamp(metaTime(base.Add(time.Duration(i) * time.Second)))
	}
}

func (g *generator) pick(n int) int { return g.r.IntN(n) }

func (g *generator) chance(p float64) bool { return g.r.Float64() < p }

func (g *generator) nsPick() string {
	if g.chance(0.75) {
		return g.ns[0]
	}
	return g.ns[1]
}

func obj(apiVersion, kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetName(name)
	if ns != "" {
		u.SetNamespace(ns)
	}
	if spec != nil {
		u.Object["spec"] = spec
	}
	return u
}

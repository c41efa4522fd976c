package gen

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Istio's names, as the Istio generator writes them.
const (
	// IstioController is the controllerName of Istio's GatewayClasses.
	IstioController = "istio.io/gateway-controller"
	// IstioRootNamespace is meshConfig's default rootNamespace: its policies without a target
	// apply to every workload of the mesh.
	IstioRootNamespace = "istio-system"
	IstioAuthz         = "AuthorizationPolicy"
	IstioRequestAuthn  = "RequestAuthentication"
	IstioWasm          = "WasmPlugin"
	IstioTelemetry     = "Telemetry"
)

// IstioGroups are the API groups and versions of the Istio kinds the generator writes.
var IstioGroups = map[string]string{
	IstioAuthz:        "security.istio.io/v1",
	IstioRequestAuthn: "security.istio.io/v1",
	IstioWasm:         "extensions.istio.io/v1alpha1",
	IstioTelemetry:    "telemetry.istio.io/v1",
}

var istioKinds = []string{IstioAuthz, IstioAuthz, IstioAuthz, IstioRequestAuthn, IstioWasm, IstioWasm, IstioTelemetry}

// istioLabelValues are the values Gateways' own labels take (Istio copies a Gateway's labels
// onto its pods).
var istioLabelValues = []string{"blue", "green"}

type istioGen struct {
	*generator
	gateways []*gateway
	gwLabels map[*gateway]map[string]string
	services []target
}

// generateIstio writes an Istio topology: one Istio GatewayClass, one to three Gateways (some
// with labels of their own), zero to two Services (each stands for the waypoint serving it), and
// one to eight AuthorizationPolicies (CUSTOM, AUDIT, DENY, ALLOW, none), RequestAuthentications,
// WasmPlugins (phases, priorities set and unset) and Telemetries, in the case's namespaces and in
// Istio's root namespace, naming their targets by targetRefs, the singular targetRef, a
// workload selector, or nothing; creation times random, ties included. TrafficExtensions, then
// EnvoyFilters, come last, each kind from a random source of its own.
func generateIstio(g *generator) *Case {
	ig := &istioGen{generator: g, gwLabels: map[*gateway]map[string]string{}}
	g.add(obj("gateway.networking.k8s.io/v1", "GatewayClass", "", g.prefix,
		map[string]any{"controllerName": IstioController}))
	for _, ns := range append(append([]string(nil), g.ns...), IstioRootNamespace) {
		g.add(obj("v1", "Namespace", "", ns, nil))
	}
	ig.genGateways()
	ig.genServices()
	n := 1 + g.pick(8)
	for i := 0; i < n; i++ {
		ig.genPolicy(istioKinds[g.pick(len(istioKinds))])
	}
	ig.stamp()
	ig.genTrafficExtensions()
	ig.genEnvoyFilters()
	return g.c
}

func (ig *istioGen) genGateways() {
	n := 1 + ig.pick(3)
	for i := 1; i <= n; i++ {
		gw := &gateway{ns: ig.nsPick(), name: fmt.Sprintf("gw%d", i)}
		o := obj("gateway.networking.k8s.io/v1", "Gateway", gw.ns, gw.name, map[string]any{
			"gatewayClassName": ig.prefix,
			"listeners":        []any{map[string]any{"name": "http", "protocol": "HTTP", "port": int64(80)}},
		})
		if ig.chance(0.4) {
			l := map[string]string{"team": istioLabelValues[ig.pick(len(istioLabelValues))]}
			o.SetLabels(l)
			ig.gwLabels[gw] = l
		}
		ig.gateways = append(ig.gateways, gw)
		ig.add(o)
	}
}

func (ig *istioGen) genServices() {
	n := ig.pick(3)
	for i := 1; i <= n; i++ {
		s := target{kind: "Service", ns: ig.nsPick(), name: fmt.Sprintf("svc%d", i)}
		ig.services = append(ig.services, s)
		ig.add(obj("v1", "Service", s.ns, s.name, map[string]any{
			"ports": []any{map[string]any{"name": "http", "port": int64(80)}},
		}))
	}
}

// genPolicy writes policy k of kind: in the first namespace most often, now and then in the
// second or in the root namespace (there named after the case, so that cases judged in one batch
// keep theirs apart).
func (ig *istioGen) genPolicy(kind string) {
	ig.policyN++
	k := ig.policyN
	ns, name := ig.place(fmt.Sprintf("p%d", k))
	spec := istioSpec(ig.generator, kind, k)
	ig.attach(spec, ns)
	ig.c.Policies = append(ig.c.Policies, obj(IstioGroups[kind], kind, ns, name, spec))
}

// place puts a policy named name in the first namespace most often, now and then in the second
// or in the root namespace (there named after the case too, df<seed>-<name>), drawing once.
func (ig *istioGen) place(name string) (string, string) {
	switch r := ig.r.Float64(); {
	case r < 0.2:
		return IstioRootNamespace, ig.prefix + "-" + name
	case r < 0.35:
		return ig.ns[1], name
	}
	return ig.ns[0], name
}

// attach names the policy's targets: targetRefs (one or two), the singular targetRef, a
// selector, or nothing (the policy's namespace; in the root namespace, the mesh). Istio admits
// only one of the three (validation.go validateOneOfSelectorType) and no targetRef namespace.
func (ig *istioGen) attach(spec map[string]any, ns string) {
	switch r := ig.r.Float64(); {
	case r < 0.4:
		refs := []any{ig.ref(ns)}
		if ig.chance(0.3) {
			refs = append(refs, ig.ref(ns))
		}
		spec["targetRefs"] = refs
	case r < 0.5:
		spec["targetRef"] = ig.ref(ns)
	case r < 0.75:
		spec["selector"] = map[string]any{"matchLabels": ig.selectorLabels()}
	}
}

// ref names a Gateway or Service, mostly one in the policy's namespace (Istio matches a
// targetRef only there), sometimes one elsewhere or one that does not exist.
func (ig *istioGen) ref(ns string) map[string]any {
	var local []target
	for _, gw := range ig.gateways {
		if gw.ns == ns || ig.chance(0.15) {
			local = append(local, target{kind: "Gateway", ns: gw.ns, name: gw.name})
		}
	}
	for _, s := range ig.services {
		if s.ns == ns || ig.chance(0.15) {
			local = append(local, s)
		}
	}
	if len(local) == 0 || ig.chance(0.1) {
		return map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "missing"}
	}
	t := local[ig.pick(len(local))]
	if t.kind == "Service" {
		return map[string]any{"group": "", "kind": "Service", "name": t.name}
	}
	return map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": t.name}
}

// selectorLabels picks labels the Gateways' pods carry (Istio's deployment template: gateway
// name, class, managed; the Gateway's own labels) or one no pod carries.
func (ig *istioGen) selectorLabels() map[string]any {
	gw := ig.gateways[ig.pick(len(ig.gateways))]
	switch ig.pick(5) {
	case 0:
		return map[string]any{"gateway.networking.k8s.io/gateway-name": gw.name}
	case 1:
		return map[string]any{"gateway.networking.k8s.io/gateway-class-name": ig.prefix}
	case 2:
		return map[string]any{"gateway.istio.io/managed": "istio.io-gateway-controller"}
	case 3:
		return map[string]any{"team": istioLabelValues[ig.pick(len(istioLabelValues))]}
	}
	return map[string]any{"app": "nothing"}
}

// istioSpec is the spec proper of policy k of kind; every value names the policy.
func istioSpec(g *generator, kind string, k int) map[string]any {
	switch kind {
	case IstioAuthz:
		spec := map[string]any{"rules": []any{map[string]any{"to": []any{map[string]any{
			"operation": map[string]any{"paths": []any{fmt.Sprintf("/p%d", k)}}}}}}}
		if a := []string{"", "ALLOW", "DENY", "CUSTOM", "AUDIT"}[g.pick(5)]; a != "" {
			spec["action"] = a
			if a == "CUSTOM" {
				spec["provider"] = map[string]any{"name": fmt.Sprintf("ext-authz-%d", k)}
			}
		}
		return spec
	case IstioRequestAuthn:
		return map[string]any{"jwtRules": []any{map[string]any{"issuer": fmt.Sprintf("https://issuer-%d.example.com", k)}}}
	case IstioWasm:
		spec := map[string]any{"url": fmt.Sprintf("oci://example.com/plugin-%d:v1", k)}
		if p := []string{"", "AUTHN", "AUTHZ", "STATS"}[g.pick(4)]; p != "" {
			spec["phase"] = p
		}
		if g.chance(0.6) {
			spec["priority"] = int64(g.pick(4) * 5)
		}
		return spec
	}
	return map[string]any{"tracing": []any{map[string]any{"randomSamplingPercentage": float64(k)}}}
}

// stamp gives the topology increasing creation times and the policies random ones, ties
// included (Istio orders by creation time, then name, then namespace); the policies are then
// listed oldest first.
func (ig *istioGen) stamp() {
	for i, o := range ig.c.Topology {
		o.SetCreationTimestamp(metaTime(BaseTime.Add(time.Duration(i) * time.Second)))
	}
	base := BaseTime.Add(time.Hour)
	n := len(ig.c.Policies)
	for _, o := range ig.c.Policies {
		o.SetCreationTimestamp(metaTime(base.Add(time.Duration(ig.pick(n)) * time.Second)))
	}
	sortByAge(ig.c.Policies)
}

func sortByAge(ps []*unstructured.Unstructured) {
	less := func(a, b *unstructured.Unstructured) bool {
		ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
		if !ta.Equal(&tb) {
			return ta.Before(&tb)
		}
		if a.GetName() != b.GetName() {
			return a.GetName() < b.GetName()
		}
		return a.GetNamespace() < b.GetNamespace()
	}
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && less(ps[j], ps[j-1]); j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}

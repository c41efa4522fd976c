package gen

import (
	"fmt"
)

const gwv1 = "gateway.networking.k8s.io/v1"

var protocols = []string{"HTTP", "HTTP", "HTTP", "TCP", "UDP", "TLS"}

// routeKinds maps a listener protocol to the route kinds it accepts.
var routeKinds = map[string][]string{
	"HTTP": {"HTTPRoute", "GRPCRoute"},
	"TCP":  {"TCPRoute"},
	"UDP":  {"UDPRoute"},
	"TLS":  {"TLSRoute"},
}

var httpHostnames = []string{"", "", "*.example.com", "a.example.com", "b.example.com"}

func (g *generator) genListeners(port *int64, n int) []listener {
	var ls []listener
	for i := 0; i < n; i++ {
		l := listener{name: fmt.Sprintf("l%d", i+1), protocol: protocols[g.pick(len(protocols))], port: *port}
		*port++
		switch l.protocol {
		case "HTTP":
			l.hostname = httpHostnames[g.pick(len(httpHostnames))]
		case "TLS":
			if g.chance(0.5) {
				l.hostname = "*.example.com"
			}
		}
		ls = append(ls, l)
	}
	return ls
}

func (g *generator) listenerSpecs(ls []listener) []any {
	var out []any
	for _, l := range ls {
		m := map[string]any{"name": l.name, "protocol": l.protocol, "port": l.port}
		from := "All"
		if g.chance(0.15) {
			from = "Same"
		}
		m["allowedRoutes"] = map[string]any{"namespaces": map[string]any{"from": from}}
		if l.hostname != "" {
			m["hostname"] = l.hostname
		}
		if l.protocol == "TLS" {
			m["tls"] = map[string]any{"mode": "Passthrough"}
		}
		out = append(out, m)
	}
	return out
}

func (g *generator) genGateways() {
	n := 1 + g.pick(2)
	port := int64(8000)
	for i := 0; i < n; i++ {
		gw := &gateway{ns: g.ns[0], name: fmt.Sprintf("gw%d", i+1)}
		if i > 0 && g.chance(0.3) {
			gw.ns = g.ns[1]
		}
		gw.listeners = g.genListeners(&port, 1+g.pick(3))
		spec := map[string]any{"gatewayClassName": g.prefix, "listeners": g.listenerSpecs(gw.listeners)}
		if g.f.ListenerSets {
			spec["allowedListeners"] = map[string]any{"namespaces": map[string]any{"from": "All"}}
		}
		g.gateways = append(g.gateways, gw)
		g.add(obj(gwv1, "Gateway", gw.ns, gw.name, spec))
	}
}

func (g *generator) genListenerSets() {
	if !g.chance(0.4) {
		return
	}
	gw := g.gateways[g.pick(len(g.gateways))]
	port := int64(9000)
	ls := &listenerSet{ns: g.nsPick(), name: "ls1", gateway: gw, listeners: g.genListeners(&port, 1+g.pick(2))}
	for i := range ls.listeners {
		ls.listeners[i].name = fmt.Sprintf("x%d", i+1)
	}
	g.sets = append(g.sets, ls)
	g.add(obj(gwv1, "ListenerSet", ls.ns, ls.name, map[string]any{
		"parentRef": map[string]any{"name": gw.name, "namespace": gw.ns},
		"listeners": g.listenerSpecs(ls.listeners),
	}))
}

// parents are the listeners a route may name, on a Gateway or a ListenerSet.
type parent struct {
	kind, ns, name string
	l              listener
}

func (g *generator) parents() []parent {
	var ps []parent
	for _, gw := range g.gateways {
		for _, l := range gw.listeners {
			ps = append(ps, parent{"Gateway", gw.ns, gw.name, l})
		}
	}
	for _, s := range g.sets {
		for _, l := range s.listeners {
			ps = append(ps, parent{"ListenerSet", s.ns, s.name, l})
		}
	}
	return ps
}

func (g *generator) genRoutes() {
	ps := g.parents()
	n := 1 + g.pick(5)
	for i := 0; i < n; i++ {
		p := ps[g.pick(len(ps))]
		kinds := routeKinds[p.l.protocol]
		r := &route{kind: kinds[g.pick(len(kinds))], ns: g.nsPick(), name: fmt.Sprintf("r%d", i+1)}
		refs := []any{g.parentRef(p, r.ns)}
		if g.chance(0.3) {
			q := ps[g.pick(len(ps))]
			if q.l.protocol == p.l.protocol && (q.name != p.name || q.ns != p.ns || q.l.name != p.l.name) {
				second := g.parentRef(q, r.ns)
				if q.kind == p.kind && q.ns == p.ns && q.name == p.name {
					// Two references to one parent must name distinct sections.
					refs[0].(map[string]any)["sectionName"] = p.l.name
					second["sectionName"] = q.l.name
				}
				refs = append(refs, second)
			}
		}
		spec := map[string]any{"parentRefs": refs}
		if h := g.routeHostnames(r.kind); h != nil {
			spec["hostnames"] = h
		}
		spec["rules"] = g.rules(r)
		g.routes = append(g.routes, r)
		g.add(obj(gwv1, r.kind, r.ns, r.name, spec))
	}
}

func (g *generator) parentRef(p parent, routeNS string) map[string]any {
	ref := map[string]any{"name": p.name}
	if p.kind == "ListenerSet" {
		ref["kind"] = "ListenerSet"
		ref["group"] = "gateway.networking.k8s.io"
	}
	if p.ns != routeNS {
		ref["namespace"] = p.ns
	}
	if g.chance(0.6) {
		ref["sectionName"] = p.l.name
	}
	return ref
}

func (g *generator) routeHostnames(kind string) []any {
	switch kind {
	case "TLSRoute":
		return []any{[]string{"a.example.com", "b.example.com"}[g.pick(2)]}
	case "HTTPRoute", "GRPCRoute":
		if g.chance(0.4) {
			return []any{[]string{"a.example.com", "b.example.com", "c.other.org"}[g.pick(3)]}
		}
	}
	return nil
}

func (g *generator) rules(r *route) []any {
	n := 1
	if r.kind == "HTTPRoute" || r.kind == "GRPCRoute" {
		n = 1 + g.pick(3)
	}
	var out []any
	for i := 0; i < n; i++ {
		rule := map[string]any{}
		name := ""
		if g.chance(0.6) {
			name = fmt.Sprintf("rule%d", i+1)
			rule["name"] = name
		}
		r.rules = append(r.rules, name)
		if r.kind == "HTTPRoute" {
			rule["matches"] = []any{map[string]any{"path": map[string]any{"type": "PathPrefix", "value": fmt.Sprintf("/%s/%d", r.name, i)}}}
		}
		if r.kind == "GRPCRoute" {
			rule["matches"] = []any{map[string]any{"method": map[string]any{"service": fmt.Sprintf("svc.%s", r.name), "method": fmt.Sprintf("M%d", i)}}}
		}
		rule["backendRefs"] = []any{g.backendRef(r)}
		out = append(out, rule)
	}
	return out
}

// backendRef names a Service of the route's namespace, or now and then one of
// the other namespace, with or without a ReferenceGrant allowing it.
func (g *generator) backendRef(r *route) map[string]any {
	ns := r.ns
	if g.chance(0.15) {
		ns = g.ns[0]
		if r.ns == ns {
			ns = g.ns[1]
		}
		if g.chance(0.5) {
			g.grant(r.kind, r.ns, ns)
		}
	}
	g.services[ns+"/backend"] = true
	ref := map[string]any{"name": "backend", "port": int64(8080)}
	if ns != r.ns {
		ref["namespace"] = ns
	}
	return ref
}

func (g *generator) grant(kind, from, to string) {
	name := fmt.Sprintf("grant-%s-%s", lower(kind), from)
	for _, o := range g.c.Topology {
		if o.GetKind() == "ReferenceGrant" && o.GetName() == name && o.GetNamespace() == to {
			return
		}
	}
	g.add(obj("gateway.networking.k8s.io/v1beta1", "ReferenceGrant", to, name, map[string]any{
		"from": []any{map[string]any{"group": "gateway.networking.k8s.io", "kind": kind, "namespace": from}},
		"to":   []any{map[string]any{"group": "", "kind": "Service"}},
	}))
}

func (g *generator) genServices() {
	for _, ns := range g.ns {
		if !g.services[ns+"/backend"] {
			continue
		}
		g.add(obj("v1", "Service", ns, "backend", map[string]any{
			"ports": []any{map[string]any{"name": "p", "port": int64(8080), "protocol": "TCP"}},
		}))
	}
	// A Service the EnvoyExtensionPolicies' external processors call.
	for _, ns := range g.ns {
		g.add(obj("v1", "Service", ns, "extproc", map[string]any{
			"ports": []any{map[string]any{"name": "grpc", "port": int64(9000), "protocol": "TCP"}},
		}))
	}
}

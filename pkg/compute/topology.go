package compute

import (
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

func namespaceNode(ns string) topology.NodeID { return topology.NodeID{Kind: "Namespace", Name: ns} }

func isNamespaceNode(n topology.NodeID) bool { return n.Group == "" && n.Kind == "Namespace" }

func isListenerSetGK(gk schema.GroupKind) bool {
	return (gk.Group == topology.GatewayGroup && gk.Kind == "ListenerSet") || (gk.Group == topology.ExperimentalGroup && gk.Kind == "XListenerSet")
}

// topologyGK reports the group/kinds whose objects are hierarchy nodes the
// engine models itself; they are never backends (that would make cycles).
func topologyGK(gk schema.GroupKind) bool {
	switch {
	case gk.Group == topology.GatewayGroup && (gk.Kind == "GatewayClass" || gk.Kind == "Gateway" || gk.Kind == "ReferenceGrant"):
		return true
	case topology.IsRouteGK(gk), isListenerSetGK(gk):
		return true
	case gk.Group == "" && gk.Kind == "Namespace":
		return true
	}
	return false
}

// Level ranks used to order attachment points (SPEC §5.2: the entry attached
// higher first). A Namespace ranks just above the object it is inserted over.
const (
	levelGatewayClass = 0
	levelNamespace    = 10
	levelGateway      = 20 // also a mesh route's Service (meshFrontContexts)
	levelListenerSet  = 25
	levelListener     = 30 // also a mesh route's Service port
	levelRoute        = 50
	levelRule         = 56
	levelBackend      = 80
	levelPort         = 86
)

func levelOf(n topology.NodeID) int {
	switch {
	case n.Group == topology.GatewayGroup && n.Kind == "GatewayClass":
		return levelGatewayClass
	case n.Group == topology.GatewayGroup && n.Kind == "Gateway":
		if n.Section != "" {
			return levelListener
		}
		return levelGateway
	case isListenerSetGK(n.GK()):
		if n.Section != "" {
			return levelListener
		}
		return levelListenerSet
	case topology.IsRouteGK(n.GK()):
		if n.Section != "" {
			return levelRule
		}
		return levelRoute
	case isNamespaceNode(n):
		return levelNamespace
	}
	if n.Section != "" {
		return levelPort
	}
	return levelBackend
}

type listener struct {
	name     string
	port     int64
	from     string // Same, All, Selector
	selector labels.Selector
	kinds    []schema.GroupKind // nil: by protocol
	protocol string
	hostname string // "" matches every route hostname
}

type gatewayObj struct {
	id        topology.NodeID
	class     string
	listeners []listener
	lsFrom    string // allowedListeners.namespaces.from (None by default)
	lsSel     labels.Selector
}

type listenerSetObj struct {
	id        topology.NodeID
	parent    topology.NodeID // the Gateway
	listeners []listener
}

type parentRef struct {
	id      topology.NodeID // Gateway, ListenerSet or (mesh) Service object
	section string
	port    int64
}

// mesh reports whether the parentRef names a Service (GAMMA): the route
// hangs under the Service, or under the port the parentRef selects.
func (pr parentRef) mesh() bool { return isServiceNode(pr.id) }

// isServiceNode reports whether n is a core Service or one of its ports.
func isServiceNode(n topology.NodeID) bool { return n.Group == "" && n.Kind == "Service" }

// meshRouteKinds are the route kinds GAMMA lets a Service parent.
func meshRouteKinds(kind string) bool { return kind == "HTTPRoute" || kind == "GRPCRoute" }

type ruleObj struct {
	// section is the rule's section node: its name, or for an unnamed rule
	// rule-<index+1>, which only profiles that address unnamed rules so
	// (Kuadrant) may target; for every other kind it is not a section.
	section  string
	unnamed  bool
	backends []topology.NodeID
}

type routeObj struct {
	id         topology.NodeID
	parentRefs []parentRef
	rules      []ruleObj
	hostnames  []string  // spec.hostnames (HTTPRoute, GRPCRoute, TLSRoute); none matches every listener
	created    time.Time // read by request traces only
}

type serviceObj struct {
	id    topology.NodeID
	ports []servicePort
}

// servicePort is an entry of spec.ports; only a named one is a section node.
type servicePort struct {
	name string
	port int64
}

type grantFrom struct{ group, kind, ns string }

type grantTo struct{ group, kind, name string }

type refGrant struct {
	from []grantFrom
	to   []grantTo
}

// ---- tolerant field access (inputs may have any shape) ----

func mget(m map[string]interface{}, k string) map[string]interface{} {
	if m == nil {
		return nil
	}
	v, _ := m[k].(map[string]interface{})
	return v
}

func sget(m map[string]interface{}, k string) string {
	if m == nil {
		return ""
	}
	v, _ := m[k].(string)
	return v
}

func lget(m map[string]interface{}, k string) []interface{} {
	if m == nil {
		return nil
	}
	v, _ := m[k].([]interface{})
	return v
}

func iget(m map[string]interface{}, k string) (int64, bool) {
	if m == nil {
		return 0, false
	}
	switch v := m[k].(type) {
	case int64:
		return v, true
	case int:
		return int64(v), true
	case int32:
		return int64(v), true
	case float64:
		return int64(v), true
	}
	return 0, false
}

func maps(l []interface{}) []map[string]interface{} {
	out := make([]map[string]interface{}, 0, len(l))
	for _, it := range l {
		if m, ok := it.(map[string]interface{}); ok {
			out = append(out, m)
		}
	}
	return out
}

// parseSelector converts a LabelSelector-shaped map; nil map selects nothing
// when required is true, everything otherwise.
func parseSelector(m map[string]interface{}) (labels.Selector, error) {
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &ls); err != nil {
		return nil, err
	}
	return metav1.LabelSelectorAsSelector(&ls)
}

func parseListeners(spec map[string]interface{}) []listener {
	var out []listener
	for _, l := range maps(lget(spec, "listeners")) {
		name := sget(l, "name")
		if name == "" {
			continue
		}
		port, _ := iget(l, "port")
		li := listener{name: name, port: port, from: "Same", protocol: strings.ToUpper(sget(l, "protocol")), hostname: strings.ToLower(sget(l, "hostname"))}
		ar := mget(l, "allowedRoutes")
		li.from, li.selector = parseFromNamespaces(mget(ar, "namespaces"), li.from)
		if ks, ok := ar["kinds"].([]interface{}); ok && ar != nil {
			li.kinds = []schema.GroupKind{}
			for _, k := range maps(ks) {
				g, has := k["group"].(string)
				if !has {
					g = topology.GatewayGroup
				}
				li.kinds = append(li.kinds, schema.GroupKind{Group: g, Kind: sget(k, "kind")})
			}
		}
		out = append(out, li)
	}
	return out
}

// parseFromNamespaces reads a Gateway API namespaces stanza ({from, selector}),
// as in a listener's allowedRoutes and a Gateway's allowedListeners. from is
// def when the stanza or its from is absent; the selector is set only for
// from: Selector, and a missing or malformed one selects nothing.
func parseFromNamespaces(ns map[string]interface{}, def string) (string, labels.Selector) {
	from := def
	if ns == nil {
		return from, nil
	}
	if f := sget(ns, "from"); f != "" {
		from = f
	}
	if from != "Selector" {
		return from, nil
	}
	sel, err := parseSelector(mget(ns, "selector"))
	if err != nil || mget(ns, "selector") == nil {
		sel = labels.Nothing()
	}
	return from, sel
}

func parseGateway(id topology.NodeID, spec map[string]interface{}) *gatewayObj {
	g := &gatewayObj{id: id, class: sget(spec, "gatewayClassName"), listeners: parseListeners(spec), lsFrom: "None"}
	g.lsFrom, g.lsSel = parseFromNamespaces(mget(mget(spec, "allowedListeners"), "namespaces"), g.lsFrom)
	return g
}

func parseListenerSet(id topology.NodeID, spec map[string]interface{}) *listenerSetObj {
	ls := &listenerSetObj{id: id, listeners: parseListeners(spec)}
	pr := mget(spec, "parentRef")
	if pr != nil && sget(pr, "name") != "" {
		g := topology.GatewayGroup
		if v, ok := pr["group"].(string); ok && v != "" {
			g = v
		}
		k := sget(pr, "kind")
		if k == "" {
			k = "Gateway"
		}
		ns := sget(pr, "namespace")
		if ns == "" {
			ns = id.Namespace
		}
		if g == topology.GatewayGroup && k == "Gateway" {
			ls.parent = topology.NodeID{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: ns, Name: sget(pr, "name")}
		}
	}
	return ls
}

func backendNode(ref map[string]interface{}, ns string) (topology.NodeID, bool) {
	name := sget(ref, "name")
	if name == "" {
		return topology.NodeID{}, false
	}
	g := sget(ref, "group")
	if g == "core" {
		g = ""
	}
	k := sget(ref, "kind")
	if k == "" {
		k = "Service"
	}
	if n := sget(ref, "namespace"); n != "" {
		ns = n
	}
	gk := schema.GroupKind{Group: g, Kind: k}
	if topologyGK(gk) {
		return topology.NodeID{}, false
	}
	return topology.NodeID{Group: g, Kind: k, Namespace: ns, Name: name}, true
}

func mirrorBackends(filters []interface{}, ns string, add func(topology.NodeID)) {
	for _, f := range maps(filters) {
		if sget(f, "type") != "RequestMirror" {
			continue
		}
		if b, ok := backendNode(mget(mget(f, "requestMirror"), "backendRef"), ns); ok {
			add(b)
		}
	}
}

func parseRoute(id topology.NodeID, spec map[string]interface{}) *routeObj {
	r := &routeObj{id: id}
	for _, h := range lget(spec, "hostnames") {
		if hs, ok := h.(string); ok && hs != "" {
			r.hostnames = append(r.hostnames, strings.ToLower(hs))
		}
	}
	for _, p := range maps(lget(spec, "parentRefs")) {
		name := sget(p, "name")
		if name == "" {
			continue
		}
		g := topology.GatewayGroup
		if v, ok := p["group"].(string); ok {
			g = v
		}
		k := sget(p, "kind")
		if k == "" {
			k = "Gateway"
		}
		ns := sget(p, "namespace")
		if ns == "" {
			ns = id.Namespace
		}
		gk := schema.GroupKind{Group: g, Kind: k}
		mesh := isServiceNode(topology.NodeID{Group: g, Kind: k}) && meshRouteKinds(id.Kind)
		if (gk.Group != topology.GatewayGroup || gk.Kind != "Gateway") && !isListenerSetGK(gk) && !mesh {
			continue // other parents are not part of the hierarchy
		}
		pr := parentRef{id: topology.NodeID{Group: g, Kind: k, Namespace: ns, Name: name}, section: sget(p, "sectionName")}
		if port, ok := iget(p, "port"); ok {
			pr.port = port
		}
		r.parentRefs = append(r.parentRefs, pr)
	}
	for i, ru := range maps(lget(spec, "rules")) {
		rule := ruleObj{section: sget(ru, "name")}
		if rule.section == "" {
			rule.section, rule.unnamed = "rule-"+strconv.Itoa(i+1), true
		}
		seen := map[topology.NodeID]bool{}
		add := func(b topology.NodeID) {
			if !seen[b] {
				seen[b] = true
				rule.backends = append(rule.backends, b)
			}
		}
		for _, br := range maps(lget(ru, "backendRefs")) {
			if b, ok := backendNode(br, id.Namespace); ok {
				add(b)
			}
			mirrorBackends(lget(br, "filters"), id.Namespace, add)
		}
		mirrorBackends(lget(ru, "filters"), id.Namespace, add)
		r.rules = append(r.rules, rule)
	}
	return r
}

func parseService(id topology.NodeID, spec map[string]interface{}) *serviceObj {
	s := &serviceObj{id: id}
	for _, p := range maps(lget(spec, "ports")) {
		port, _ := iget(p, "port")
		s.ports = append(s.ports, servicePort{name: sget(p, "name"), port: port})
	}
	return s
}

func parseGrant(spec map[string]interface{}) *refGrant {
	g := &refGrant{}
	for _, f := range maps(lget(spec, "from")) {
		g.from = append(g.from, grantFrom{group: sget(f, "group"), kind: sget(f, "kind"), ns: sget(f, "namespace")})
	}
	for _, t := range maps(lget(spec, "to")) {
		g.to = append(g.to, grantTo{group: sget(t, "group"), kind: sget(t, "kind"), name: sget(t, "name")})
	}
	return g
}

// defaultRouteKinds is what a listener admits when allowedRoutes.kinds is unset.
func defaultRouteKinds(protocol string) []string {
	switch protocol {
	case "HTTP", "HTTPS":
		return []string{"HTTPRoute", "GRPCRoute"}
	case "TLS":
		return []string{"TLSRoute"}
	case "TCP":
		return []string{"TCPRoute"}
	case "UDP":
		return []string{"UDPRoute"}
	}
	return nil // unknown protocol: any route kind
}

// keyOf is the output key of n's object.
func keyOf(n topology.NodeID) Key { return Key{Namespace: n.Namespace, Name: n.Name} }

package topology

import (
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// MapField is m[k] when it is an object (tolerant field access: inputs may have any shape).
func MapField(m map[string]interface{}, k string) map[string]interface{} {
	if m == nil {
		return nil
	}
	v, _ := m[k].(map[string]interface{})
	return v
}

// StringField is m[k] when it is a string.
func StringField(m map[string]interface{}, k string) string {
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

// ParseSelector converts a LabelSelector-shaped map; nil map selects nothing
// when required is true, everything otherwise.
func ParseSelector(m map[string]interface{}) (labels.Selector, error) {
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &ls); err != nil {
		return nil, err
	}
	return metav1.LabelSelectorAsSelector(&ls)
}

func parseListeners(spec map[string]interface{}) []Listener {
	var out []Listener
	for _, l := range maps(lget(spec, "listeners")) {
		name := StringField(l, "name")
		if name == "" {
			continue
		}
		port, _ := iget(l, "port")
		li := Listener{Name: name, Port: port, From: "Same", Protocol: strings.ToUpper(StringField(l, "protocol")), Hostname: strings.ToLower(StringField(l, "hostname")), TLS: parseListenerTLS(MapField(l, "tls"))}
		ar := MapField(l, "allowedRoutes")
		li.From, li.Selector = ParseFromNamespaces(MapField(ar, "namespaces"), li.From)
		if ks, ok := ar["kinds"].([]interface{}); ok && ar != nil {
			li.Kinds = []schema.GroupKind{}
			for _, k := range maps(ks) {
				g, has := k["group"].(string)
				if !has {
					g = GatewayGroup
				}
				li.Kinds = append(li.Kinds, schema.GroupKind{Group: g, Kind: StringField(k, "kind")})
			}
		}
		out = append(out, li)
	}
	return out
}

func parseListenerTLS(tls map[string]interface{}) *ListenerTLS {
	if tls == nil {
		return nil
	}
	out := &ListenerTLS{Mode: StringField(tls, "mode")}
	for _, r := range maps(lget(tls, "certificateRefs")) {
		out.CertificateRefs = append(out.CertificateRefs, CertificateRef{
			Group: StringField(r, "group"), Kind: StringField(r, "kind"),
			Namespace: StringField(r, "namespace"), Name: StringField(r, "name"),
		})
	}
	return out
}

// ParseFromNamespaces reads a Gateway API namespaces stanza ({from, selector}),
// as in a listener's allowedRoutes and a Gateway's allowedListeners. from is
// def when the stanza or its from is absent; the selector is set only for
// from: Selector, and a missing or malformed one selects nothing.
func ParseFromNamespaces(ns map[string]interface{}, def string) (string, labels.Selector) {
	from := def
	if ns == nil {
		return from, nil
	}
	if f := StringField(ns, "from"); f != "" {
		from = f
	}
	if from != "Selector" {
		return from, nil
	}
	sel, err := ParseSelector(MapField(ns, "selector"))
	if err != nil || MapField(ns, "selector") == nil {
		sel = labels.Nothing()
	}
	return from, sel
}

// ParseGateway reads a Gateway's spec.
func ParseGateway(id NodeID, spec map[string]interface{}) *Gateway {
	g := &Gateway{ID: id, Class: StringField(spec, "gatewayClassName"), Listeners: parseListeners(spec), ListenerSetsFrom: "None"}
	g.ListenerSetsFrom, g.ListenerSetSelector = ParseFromNamespaces(MapField(MapField(spec, "allowedListeners"), "namespaces"), g.ListenerSetsFrom)
	return g
}

// ParseListenerSet reads a ListenerSet's spec.
func ParseListenerSet(id NodeID, spec map[string]interface{}) *ListenerSet {
	ls := &ListenerSet{ID: id, Listeners: parseListeners(spec)}
	pr := MapField(spec, "parentRef")
	if pr != nil && StringField(pr, "name") != "" {
		g := GatewayGroup
		if v, ok := pr["group"].(string); ok && v != "" {
			g = v
		}
		k := StringField(pr, "kind")
		if k == "" {
			k = "Gateway"
		}
		ns := StringField(pr, "namespace")
		if ns == "" {
			ns = id.Namespace
		}
		if g == GatewayGroup && k == "Gateway" {
			ls.Parent = NodeID{Group: GatewayGroup, Kind: "Gateway", Namespace: ns, Name: StringField(pr, "name")}
		}
	}
	return ls
}

func backendNode(ref map[string]interface{}, ns string) (NodeID, bool) {
	name := StringField(ref, "name")
	if name == "" {
		return NodeID{}, false
	}
	g := StringField(ref, "group")
	if g == "core" {
		g = ""
	}
	k := StringField(ref, "kind")
	if k == "" {
		k = "Service"
	}
	if n := StringField(ref, "namespace"); n != "" {
		ns = n
	}
	gk := schema.GroupKind{Group: g, Kind: k}
	if IsTopologyGK(gk) {
		return NodeID{}, false
	}
	return NodeID{Group: g, Kind: k, Namespace: ns, Name: name}, true
}

func mirrorBackends(filters []interface{}, ns string, add func(NodeID)) {
	for _, f := range maps(filters) {
		if StringField(f, "type") != "RequestMirror" {
			continue
		}
		if b, ok := backendNode(MapField(MapField(f, "requestMirror"), "backendRef"), ns); ok {
			add(b)
		}
	}
}

// ParseRoute reads a route's spec.
func ParseRoute(id NodeID, spec map[string]interface{}) *Route {
	r := &Route{ID: id}
	for _, h := range lget(spec, "hostnames") {
		if hs, ok := h.(string); ok && hs != "" {
			r.Hostnames = append(r.Hostnames, strings.ToLower(hs))
		}
	}
	for _, p := range maps(lget(spec, "parentRefs")) {
		r.HasParentRefs = true
		name := StringField(p, "name")
		if name == "" {
			continue
		}
		g := GatewayGroup
		if v, ok := p["group"].(string); ok {
			g = v
		}
		k := StringField(p, "kind")
		if k == "" {
			k = "Gateway"
		}
		ns := StringField(p, "namespace")
		if ns == "" {
			ns = id.Namespace
		}
		gk := schema.GroupKind{Group: g, Kind: k}
		if g == GatewayGroup && k == "HTTPRoute" {
			r.RouteParents = append(r.RouteParents, NodeID{Group: g, Kind: k, Namespace: ns, Name: name})
			continue // a delegation parent (delegation.go)
		}
		mesh := IsServiceNode(NodeID{Group: g, Kind: k}) && MeshRouteKinds(id.Kind)
		if (gk.Group != GatewayGroup || gk.Kind != "Gateway") && !IsListenerSetGK(gk) && !mesh {
			continue // other parents are not part of the hierarchy
		}
		pr := ParentRef{ID: NodeID{Group: g, Kind: k, Namespace: ns, Name: name}, Section: StringField(p, "sectionName")}
		if port, ok := iget(p, "port"); ok {
			pr.Port = port
		}
		r.ParentRefs = append(r.ParentRefs, pr)
	}
	http := id.Group == GatewayGroup && id.Kind == "HTTPRoute"
	for i, ru := range maps(lget(spec, "rules")) {
		r.Rules = append(r.Rules, parseRule(id.Namespace, i, ru, http))
	}
	return r
}

// parseRule reads rule i of a route of namespace ns (an HTTPRoute's when http is set: its
// matches and its backendRefs naming HTTPRoutes too).
func parseRule(ns string, i int, ru map[string]interface{}, http bool) Rule {
	rule := Rule{Section: StringField(ru, "name")}
	if http {
		rule.Matches = parseMatches(ru)
	}
	if rule.Section == "" {
		rule.Section, rule.Unnamed = "rule-"+strconv.Itoa(i+1), true
	}
	seen := map[NodeID]bool{}
	add := func(b NodeID) {
		if !seen[b] {
			seen[b] = true
			rule.Backends = append(rule.Backends, b)
		}
	}
	for _, br := range maps(lget(ru, "backendRefs")) {
		if d, ok := delegateRef(br, ns); ok && http {
			rule.Delegates = append(rule.Delegates, d)
			continue
		}
		if b, ok := backendNode(br, ns); ok {
			add(b)
		}
		mirrorBackends(lget(br, "filters"), ns, add)
	}
	mirrorBackends(lget(ru, "filters"), ns, add)
	return rule
}

// ParseService reads a Service's spec.
func ParseService(id NodeID, spec map[string]interface{}) *Service {
	s := &Service{ID: id}
	for _, p := range maps(lget(spec, "ports")) {
		port, _ := iget(p, "port")
		s.Ports = append(s.Ports, ServicePort{Name: StringField(p, "name"), Port: port})
	}
	return s
}

// ParseGrant reads a ReferenceGrant's spec.
func ParseGrant(spec map[string]interface{}) *ReferenceGrant {
	g := &ReferenceGrant{}
	for _, f := range maps(lget(spec, "from")) {
		g.From = append(g.From, GrantFrom{Group: StringField(f, "group"), Kind: StringField(f, "kind"), Namespace: StringField(f, "namespace")})
	}
	for _, t := range maps(lget(spec, "to")) {
		g.To = append(g.To, GrantTo{Group: StringField(t, "group"), Kind: StringField(t, "kind"), Name: StringField(t, "name")})
	}
	return g
}

// DefaultRouteKinds is what a listener admits when allowedRoutes.kinds is unset.
func DefaultRouteKinds(protocol string) []string {
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

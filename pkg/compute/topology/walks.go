package topology

// The walks of the graph (docs/spec.md §3): which parents a node has
// (listeners admitting a route, rules referencing a backend, ...), its
// children, and descents below a node.

import (
	"slices"

	"k8s.io/apimachinery/pkg/labels"
)

// LSAllowed reports whether Gateway g allows ListenerSet ls (allowedListeners).
func (gr *Graph) LSAllowed(g *Gateway, ls *ListenerSet) bool {
	switch g.ListenerSetsFrom {
	case "Same":
		return ls.ID.Namespace == g.ID.Namespace
	case "All":
		return true
	case "Selector":
		return g.ListenerSetSelector != nil && g.ListenerSetSelector.Matches(labels.Set(gr.NSLabels[ls.ID.Namespace]))
	}
	return false
}

// RefusalReason is why a listener does not admit a route; computed on
// every walk of the graph, so a code, put in words only for a trace.
type RefusalReason uint8

// The refusals; Admitted is none.
const (
	Admitted RefusalReason = iota
	refusedNamespaceSelector
	refusedNamespaceSame
	refusedNamespaceFrom
	refusedHostnames
	refusedKinds
	refusedProtocol
)

// Refusal says why listener l (of an object in ownerNS) does not admit
// route r (Gateway API: allowedRoutes.namespaces, the route's hostnames,
// allowedRoutes.kinds or the protocol's route kinds).
func (gr *Graph) Refusal(l Listener, ownerNS string, r *Route) RefusalReason {
	switch l.From {
	case "All":
	case "Selector":
		if l.Selector == nil || !l.Selector.Matches(labels.Set(gr.NSLabels[r.ID.Namespace])) {
			return refusedNamespaceSelector
		}
	case "Same":
		if r.ID.Namespace != ownerNS {
			return refusedNamespaceSame
		}
	default:
		return refusedNamespaceFrom
	}
	if !HostnamesIntersect(l, r.Hostnames) {
		return refusedHostnames
	}
	if l.Kinds != nil {
		for _, k := range l.Kinds {
			if k.Group == r.ID.Group && k.Kind == r.ID.Kind {
				return Admitted
			}
		}
		return refusedKinds
	}
	if dk := DefaultRouteKinds(l.Protocol); dk != nil {
		for _, k := range dk {
			if k == r.ID.Kind {
				return Admitted
			}
		}
		return refusedProtocol
	}
	return Admitted
}

// Words puts a refusal in words.
func (why RefusalReason) Words(l Listener, ownerNS string, r *Route) string {
	switch why {
	case refusedNamespaceSelector:
		return "listener " + l.Name + "'s allowedRoutes.namespaces.selector does not select namespace " + r.ID.Namespace
	case refusedNamespaceSame:
		return "listener " + l.Name + " admits routes of namespace " + ownerNS + " only"
	case refusedNamespaceFrom:
		return "listener " + l.Name + "'s allowedRoutes.namespaces.from is " + l.From
	case refusedHostnames:
		return "its hostnames do not intersect listener " + l.Name + "'s hostname " + l.Hostname
	case refusedKinds:
		return "listener " + l.Name + "'s allowedRoutes.kinds does not list " + r.ID.Kind
	case refusedProtocol:
		return "listener " + l.Name + " (" + l.Protocol + ") does not take a " + r.ID.Kind
	}
	return ""
}

// AttachesTo reports whether route r attaches to listener section n.
func (gr *Graph) AttachesTo(r *Route, n NodeID) bool {
	found := false
	gr.EachRouteParent(r, func(p NodeID) bool {
		found = p == n
		return !found
	})
	return found
}

// EachRouteParent calls fn with each listener section, mesh Service or
// Service port a route attaches to (possibly more than once), until fn
// returns false.
func (gr *Graph) EachRouteParent(r *Route, fn func(NodeID) bool) {
	for _, pr := range r.ParentRefs {
		if pr.Mesh() {
			if n, ok := gr.meshParent(pr); ok && !fn(n) {
				return
			}
			continue
		}
		var ls []Listener
		switch pr.ID.Kind {
		case "Gateway":
			g := gr.Gateways[pr.ID]
			if g == nil {
				continue
			}
			ls = g.Listeners
		default:
			l := gr.ListenerSets[pr.ID]
			if l == nil {
				continue
			}
			ls = l.Listeners
		}
		for _, l := range ls {
			if pr.Section != "" && pr.Section != l.Name {
				continue
			}
			if pr.Port != 0 && pr.Port != l.Port {
				continue
			}
			if gr.Refusal(l, pr.ID.Namespace, r) != Admitted {
				continue
			}
			n := pr.ID
			n.Section = l.Name
			if !fn(n) {
				return
			}
		}
	}
}

// meshParent is the node a Service parentRef hangs its route under (GAMMA):
// the port it selects by port number and/or sectionName (the port's name)
// when it selects one, else the Service. A port entry without a name is no
// section node, so a route selecting it hangs under the Service; a
// selection that matches no port attaches nowhere, as the route would not
// be accepted.
func (gr *Graph) meshParent(pr ParentRef) (NodeID, bool) {
	s := gr.Services[pr.ID]
	if s == nil {
		return NodeID{}, false
	}
	if pr.Section == "" && pr.Port == 0 {
		return pr.ID, true
	}
	for _, p := range s.Ports {
		if pr.Section != "" && pr.Section != p.Name || pr.Port != 0 && pr.Port != p.Port {
			continue
		}
		n := pr.ID
		n.Section = p.Name
		return n, true
	}
	return NodeID{}, false
}

// hangsUnder reports whether backend b hangs under rule (a route section):
// the reference is allowed (same namespace or a ReferenceGrant), and b is
// not a Service the route hangs under as a mesh route. Such a route's
// Service is the top of its paths already: a path holds an object once, and
// the graph stays acyclic.
func (gr *Graph) hangsUnder(rule, b NodeID) bool {
	if !gr.BackendAllowed(rule, b) {
		return false
	}
	if r := gr.Routes[rule.Object()]; r != nil && IsServiceNode(b) {
		for _, pr := range r.ParentRefs {
			if pr.Mesh() && pr.ID == b {
				return false
			}
		}
	}
	return true
}

// AppendParents appends the parent nodes of n in the hierarchy to dst
// (Namespace nodes are not part of the graph; they are inserted into paths,
// see fold.Session.contexts). Callers pass a small array's slice
// as dst: most nodes have one parent, and nothing needs to be allocated.
func (gr *Graph) AppendParents(dst []NodeID, n NodeID) []NodeID {
	if n.Section != "" {
		return append(dst, n.Object())
	}
	gk := n.GK()
	switch {
	case IsNamespaceNode(n), gk.Group == GatewayGroup && gk.Kind == "GatewayClass":
		return dst
	case gk.Group == GatewayGroup && gk.Kind == "Gateway":
		if g := gr.Gateways[n]; g != nil && gr.Classes[g.Class] {
			return append(dst, NodeID{Group: GatewayGroup, Kind: "GatewayClass", Name: g.Class})
		}
		return dst
	case IsListenerSetGK(gk):
		if ls := gr.ListenerSets[n]; ls != nil {
			if g := gr.Gateways[ls.Parent]; g != nil && gr.LSAllowed(g, ls) {
				return append(dst, g.ID)
			}
		}
		return dst
	case IsRouteGK(gk):
		if r := gr.Routes[n]; r != nil {
			gr.EachRouteParent(r, func(p NodeID) bool {
				if !slices.Contains(dst, p) { // a handful of parents: no map
					dst = append(dst, p)
				}
				return true
			})
			return append(dst, gr.Delegation().Parents(n)...)
		}
		return dst
	}
	ps := gr.BackendParents[n]
	if len(ps) == 0 {
		return dst
	}
	start := len(dst)
	for p := range ps {
		if gr.hangsUnder(p, n) {
			dst = append(dst, p)
		}
	}
	slices.SortFunc(dst[start:], cmpNode)
	return dst
}

// cmpNode orders nodes like LessNode.
func cmpNode(a, b NodeID) int {
	switch {
	case LessNode(a, b):
		return -1
	case LessNode(b, a):
		return 1
	}
	return 0
}

// children is the inverse of parents, plus Namespace -> objects in it,
// but for mesh routes: a mesh route's parent is its Service (port) only as
// the top of a path, which descend knows.
func (gr *Graph) children(n NodeID, fn func(NodeID)) {
	gk := n.GK()
	isGateway := gk.Group == GatewayGroup && gk.Kind == "Gateway"
	switch {
	case IsNamespaceNode(n):
		for c := range gr.ByNS[n.Name] {
			fn(c)
		}
	case gk.Group == GatewayGroup && gk.Kind == "GatewayClass":
		for c := range gr.GatewaysByClass[n.Name] {
			fn(c)
		}
	case isGateway && n.Section == "":
		gr.gatewayChildren(n, fn)
	case IsListenerSetGK(gk) && n.Section == "":
		if ls := gr.ListenerSets[n]; ls != nil {
			sectionsOfList(n, ls.Listeners, fn)
		}
	case isGateway || IsListenerSetGK(gk):
		gr.attachedRoutes(n, fn)
	case IsRouteGK(gk):
		gr.routeChildren(n, fn)
	case IsServiceNode(n) && n.Section == "":
		if s := gr.Services[n]; s != nil {
			for _, p := range s.Ports {
				if p.Name != "" {
					c := n
					c.Section = p.Name
					fn(c)
				}
			}
		}
	}
}

// sectionsOfList calls fn with the listener sections of object n.
func sectionsOfList(n NodeID, ls []Listener, fn func(NodeID)) {
	for _, l := range ls {
		c := n
		c.Section = l.Name
		fn(c)
	}
}

// gatewayChildren: a Gateway's listeners and the ListenerSets it allows.
func (gr *Graph) gatewayChildren(n NodeID, fn func(NodeID)) {
	g := gr.Gateways[n]
	if g == nil {
		return
	}
	sectionsOfList(n, g.Listeners, fn)
	for c := range gr.ListenerSetsByGateway[n] {
		if ls := gr.ListenerSets[c]; ls != nil && gr.LSAllowed(g, ls) {
			fn(c)
		}
	}
}

// attachedRoutes: the routes attached through n, a listener section or (mesh
// routes) a Service or its port.
func (gr *Graph) attachedRoutes(n NodeID, fn func(NodeID)) {
	for rid := range gr.RoutesByParent[n.Object()] {
		if r := gr.Routes[rid]; r != nil && gr.AttachesTo(r, n) {
			fn(rid)
		}
	}
}

// routeChildren: a route's rules; a rule's backends (those allowed to hang under it) and
// the routes it delegates to.
func (gr *Graph) routeChildren(n NodeID, fn func(NodeID)) {
	r := gr.Routes[n.Object()]
	if r == nil {
		return
	}
	for _, ru := range r.Rules {
		if n.Section == "" {
			c := n
			c.Section = ru.Section
			fn(c)
			continue
		}
		if ru.Section != n.Section {
			continue
		}
		for _, b := range ru.Backends {
			if gr.Objects[b] > 0 && gr.hangsUnder(n, b) {
				fn(b)
			}
		}
		for _, c := range gr.Delegation().Children(n) {
			fn(c)
		}
	}
}

// Visited records the nodes a descent has been to.
type Visited map[NodeID]uint8

const (
	visitedNode       uint8 = 1 << iota // the node and what children lists
	visitedMeshRoutes                   // a Service's or port's mesh routes
)

// Descend calls visit with n and every node below it, each once. front says
// that the descent did not come to n as a rule's backend: only then are the
// mesh routes of a Service or port below it, as their paths start at the
// Service (fold.Session.meshFrontContexts), not at what routes to it.
func (gr *Graph) Descend(n NodeID, front bool, seen Visited, visit func(NodeID)) {
	if seen[n]&visitedNode == 0 {
		seen[n] |= visitedNode
		visit(n)
		childFront := true
		switch {
		case IsRouteGK(n.GK()) && n.Section != "":
			childFront = false // a rule's children are its backends
		case IsServiceNode(n):
			childFront = front // the ports of a Service
		}
		gr.children(n, func(c NodeID) { gr.Descend(c, childFront, seen, visit) })
	}
	if front && IsServiceNode(n) && seen[n]&visitedMeshRoutes == 0 {
		seen[n] |= visitedMeshRoutes
		// The ports, when an earlier descent came to them as backends.
		gr.children(n, func(c NodeID) { gr.Descend(c, true, seen, visit) })
		gr.attachedRoutes(n, func(c NodeID) { gr.Descend(c, true, seen, visit) })
	}
}

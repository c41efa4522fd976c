package compute

// The hierarchy as a graph (SPEC §3): which parents a node has (listeners
// admitting a route, rules referencing a backend, ...) and walks over it.

import (
	"slices"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

func (st *state) lsAllowed(g *gatewayObj, ls *listenerSetObj) bool {
	switch g.lsFrom {
	case "Same":
		return ls.id.Namespace == g.id.Namespace
	case "All":
		return true
	case "Selector":
		return g.lsSel != nil && g.lsSel.Matches(labels.Set(st.nsLabels[ls.id.Namespace]))
	}
	return false
}

func (st *state) admits(l listener, ownerNS string, r *routeObj) bool {
	return st.refusal(l, ownerNS, r) == admitted
}

// refusalReason is why a listener does not admit a route; computed on
// every walk of the graph, so a code, put in words only for a trace.
type refusalReason uint8

const (
	admitted refusalReason = iota
	refusedNamespaceSelector
	refusedNamespaceSame
	refusedNamespaceFrom
	refusedHostnames
	refusedKinds
	refusedProtocol
)

// refusal says why listener l (of an object in ownerNS) does not admit
// route r (Gateway API: allowedRoutes.namespaces, the route's hostnames,
// allowedRoutes.kinds or the protocol's route kinds).
func (st *state) refusal(l listener, ownerNS string, r *routeObj) refusalReason {
	switch l.from {
	case "All":
	case "Selector":
		if l.selector == nil || !l.selector.Matches(labels.Set(st.nsLabels[r.id.Namespace])) {
			return refusedNamespaceSelector
		}
	case "Same":
		if r.id.Namespace != ownerNS {
			return refusedNamespaceSame
		}
	default:
		return refusedNamespaceFrom
	}
	if !hostnamesIntersect(l, r.hostnames) {
		return refusedHostnames
	}
	if l.kinds != nil {
		for _, k := range l.kinds {
			if k.Group == r.id.Group && k.Kind == r.id.Kind {
				return admitted
			}
		}
		return refusedKinds
	}
	if dk := defaultRouteKinds(l.protocol); dk != nil {
		for _, k := range dk {
			if k == r.id.Kind {
				return admitted
			}
		}
		return refusedProtocol
	}
	return admitted
}

// words puts a refusal in words.
func (why refusalReason) words(l listener, ownerNS string, r *routeObj) string {
	switch why {
	case refusedNamespaceSelector:
		return "listener " + l.name + "'s allowedRoutes.namespaces.selector does not select namespace " + r.id.Namespace
	case refusedNamespaceSame:
		return "listener " + l.name + " admits routes of namespace " + ownerNS + " only"
	case refusedNamespaceFrom:
		return "listener " + l.name + "'s allowedRoutes.namespaces.from is " + l.from
	case refusedHostnames:
		return "its hostnames do not intersect listener " + l.name + "'s hostname " + l.hostname
	case refusedKinds:
		return "listener " + l.name + "'s allowedRoutes.kinds does not list " + r.id.Kind
	case refusedProtocol:
		return "listener " + l.name + " (" + l.protocol + ") does not take a " + r.id.Kind
	}
	return ""
}

// attachesTo reports whether route r attaches to listener section n.
func (st *state) attachesTo(r *routeObj, n topology.NodeID) bool {
	found := false
	st.eachRouteParent(r, func(p topology.NodeID) bool {
		found = p == n
		return !found
	})
	return found
}

// eachRouteParent calls fn with each listener section, mesh Service or
// Service port a route attaches to (possibly more than once), until fn
// returns false.
func (st *state) eachRouteParent(r *routeObj, fn func(topology.NodeID) bool) {
	for _, pr := range r.parentRefs {
		if pr.mesh() {
			if n, ok := st.meshParent(pr); ok && !fn(n) {
				return
			}
			continue
		}
		var ls []listener
		switch pr.id.Kind {
		case "Gateway":
			g := st.gateways[pr.id]
			if g == nil {
				continue
			}
			ls = g.listeners
		default:
			l := st.listenerSets[pr.id]
			if l == nil {
				continue
			}
			ls = l.listeners
		}
		for _, l := range ls {
			if pr.section != "" && pr.section != l.name {
				continue
			}
			if pr.port != 0 && pr.port != l.port {
				continue
			}
			if !st.admits(l, pr.id.Namespace, r) {
				continue
			}
			n := pr.id
			n.Section = l.name
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
func (st *state) meshParent(pr parentRef) (topology.NodeID, bool) {
	s := st.services[pr.id]
	if s == nil {
		return topology.NodeID{}, false
	}
	if pr.section == "" && pr.port == 0 {
		return pr.id, true
	}
	for _, p := range s.ports {
		if pr.section != "" && pr.section != p.name || pr.port != 0 && pr.port != p.port {
			continue
		}
		n := pr.id
		n.Section = p.name
		return n, true
	}
	return topology.NodeID{}, false
}

// hangsUnder reports whether backend b hangs under rule (a route section):
// the reference is allowed (same namespace or a ReferenceGrant), and b is
// not a Service the route hangs under as a mesh route. Such a route's
// Service is the top of its paths already: a path holds an object once, and
// the graph stays acyclic.
func (st *state) hangsUnder(rule, b topology.NodeID) bool {
	if !st.backendAllowed(rule, b) {
		return false
	}
	if r := st.routes[rule.Object()]; r != nil && isServiceNode(b) {
		for _, pr := range r.parentRefs {
			if pr.mesh() && pr.id == b {
				return false
			}
		}
	}
	return true
}

// appendParents appends the parent nodes of n in the hierarchy to dst
// (Namespace nodes are not part of the graph; they are inserted into paths,
// see session.contexts). Callers pass a small array's slice as dst: most
// nodes have one parent, and nothing needs to be allocated.
func (st *state) appendParents(dst []topology.NodeID, n topology.NodeID) []topology.NodeID {
	if n.Section != "" {
		return append(dst, n.Object())
	}
	gk := n.GK()
	switch {
	case isNamespaceNode(n), gk.Group == topology.GatewayGroup && gk.Kind == "GatewayClass":
		return dst
	case gk.Group == topology.GatewayGroup && gk.Kind == "Gateway":
		if g := st.gateways[n]; g != nil && st.classes[g.class] {
			return append(dst, topology.NodeID{Group: topology.GatewayGroup, Kind: "GatewayClass", Name: g.class})
		}
		return dst
	case isListenerSetGK(gk):
		if ls := st.listenerSets[n]; ls != nil {
			if g := st.gateways[ls.parent]; g != nil && st.lsAllowed(g, ls) {
				return append(dst, g.id)
			}
		}
		return dst
	case topology.IsRouteGK(gk):
		if r := st.routes[n]; r != nil {
			st.eachRouteParent(r, func(p topology.NodeID) bool {
				if !slices.Contains(dst, p) { // a handful of parents: no map
					dst = append(dst, p)
				}
				return true
			})
			return dst
		}
		return dst
	}
	ps := st.backendParents[n]
	if len(ps) == 0 {
		return dst
	}
	start := len(dst)
	for p := range ps {
		if st.hangsUnder(p, n) {
			dst = append(dst, p)
		}
	}
	slices.SortFunc(dst[start:], cmpNode)
	return dst
}

// cmpNode orders nodes like topology.LessNode.
func cmpNode(a, b topology.NodeID) int {
	switch {
	case topology.LessNode(a, b):
		return -1
	case topology.LessNode(b, a):
		return 1
	}
	return 0
}

// children is the inverse of parents, plus Namespace -> objects in it,
// but for mesh routes: a mesh route's parent is its Service (port) only as
// the top of a path, which descend knows.
func (st *state) children(n topology.NodeID, fn func(topology.NodeID)) {
	gk := n.GK()
	isGateway := gk.Group == topology.GatewayGroup && gk.Kind == "Gateway"
	switch {
	case isNamespaceNode(n):
		for c := range st.byNS[n.Name] {
			fn(c)
		}
	case gk.Group == topology.GatewayGroup && gk.Kind == "GatewayClass":
		for c := range st.gwByClass[n.Name] {
			fn(c)
		}
	case isGateway && n.Section == "":
		st.gatewayChildren(n, fn)
	case isListenerSetGK(gk) && n.Section == "":
		if ls := st.listenerSets[n]; ls != nil {
			sectionsOfList(n, ls.listeners, fn)
		}
	case isGateway || isListenerSetGK(gk):
		st.attachedRoutes(n, fn)
	case topology.IsRouteGK(gk):
		st.routeChildren(n, fn)
	case isServiceNode(n) && n.Section == "":
		if s := st.services[n]; s != nil {
			for _, p := range s.ports {
				if p.name != "" {
					c := n
					c.Section = p.name
					fn(c)
				}
			}
		}
	}
}

// sectionsOfList calls fn with the listener sections of object n.
func sectionsOfList(n topology.NodeID, ls []listener, fn func(topology.NodeID)) {
	for _, l := range ls {
		c := n
		c.Section = l.name
		fn(c)
	}
}

// gatewayChildren: a Gateway's listeners and the ListenerSets it allows.
func (st *state) gatewayChildren(n topology.NodeID, fn func(topology.NodeID)) {
	g := st.gateways[n]
	if g == nil {
		return
	}
	sectionsOfList(n, g.listeners, fn)
	for c := range st.lsByGateway[n] {
		if ls := st.listenerSets[c]; ls != nil && st.lsAllowed(g, ls) {
			fn(c)
		}
	}
}

// attachedRoutes: the routes attached through n, a listener section or (mesh
// routes) a Service or its port.
func (st *state) attachedRoutes(n topology.NodeID, fn func(topology.NodeID)) {
	for rid := range st.routesByParent[n.Object()] {
		if r := st.routes[rid]; r != nil && st.attachesTo(r, n) {
			fn(rid)
		}
	}
}

// routeChildren: a route's rules; a rule's backends (those allowed to hang under it).
func (st *state) routeChildren(n topology.NodeID, fn func(topology.NodeID)) {
	r := st.routes[n.Object()]
	if r == nil {
		return
	}
	for _, ru := range r.rules {
		if n.Section == "" {
			c := n
			c.Section = ru.section
			fn(c)
			continue
		}
		if ru.section != n.Section {
			continue
		}
		for _, b := range ru.backends {
			if st.objects[b] > 0 && st.hangsUnder(n, b) {
				fn(b)
			}
		}
	}
}

// subtree adds the keys of n's owner and of every node below n.
func (st *state) subtree(n topology.NodeID, ks keySet, seen visited) {
	if st.bulk {
		return
	}
	st.walk(n, ks, seen)
}

func (st *state) walk(n topology.NodeID, ks keySet, seen visited) {
	st.descend(n, true, seen, func(c topology.NodeID) { ks[keyOf(c)] = true })
}

// visited records the nodes a descent has been to.
type visited map[topology.NodeID]uint8

const (
	visitedNode       uint8 = 1 << iota // the node and what children lists
	visitedMeshRoutes                   // a Service's or port's mesh routes
)

// descend calls visit with n and every node below it, each once. front says
// that the descent did not come to n as a rule's backend: only then are the
// mesh routes of a Service or port below it, as their paths start at the
// Service (meshFrontContexts), not at what routes to it.
func (st *state) descend(n topology.NodeID, front bool, seen visited, visit func(topology.NodeID)) {
	if seen[n]&visitedNode == 0 {
		seen[n] |= visitedNode
		visit(n)
		childFront := true
		switch {
		case topology.IsRouteGK(n.GK()) && n.Section != "":
			childFront = false // a rule's children are its backends
		case isServiceNode(n):
			childFront = front // the ports of a Service
		}
		st.children(n, func(c topology.NodeID) { st.descend(c, childFront, seen, visit) })
	}
	if front && isServiceNode(n) && seen[n]&visitedMeshRoutes == 0 {
		seen[n] |= visitedMeshRoutes
		// The ports, when an earlier descent came to them as backends.
		st.children(n, func(c topology.NodeID) { st.descend(c, true, seen, visit) })
		st.attachedRoutes(n, func(c topology.NodeID) { st.descend(c, true, seen, visit) })
	}
}

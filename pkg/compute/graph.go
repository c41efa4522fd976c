package compute

// The hierarchy as a graph (docs/spec.md §3): which parents a node has (listeners
// admitting a route, rules referencing a backend, ...) and walks over it.

import (
	"slices"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

func (st *state) lsAllowed(g *topology.Gateway, ls *topology.ListenerSet) bool {
	switch g.ListenerSetsFrom {
	case "Same":
		return ls.ID.Namespace == g.ID.Namespace
	case "All":
		return true
	case "Selector":
		return g.ListenerSetSelector != nil && g.ListenerSetSelector.Matches(labels.Set(st.nsLabels[ls.ID.Namespace]))
	}
	return false
}

func (st *state) admits(l topology.Listener, ownerNS string, r *topology.Route) bool {
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
func (st *state) refusal(l topology.Listener, ownerNS string, r *topology.Route) refusalReason {
	switch l.From {
	case "All":
	case "Selector":
		if l.Selector == nil || !l.Selector.Matches(labels.Set(st.nsLabels[r.ID.Namespace])) {
			return refusedNamespaceSelector
		}
	case "Same":
		if r.ID.Namespace != ownerNS {
			return refusedNamespaceSame
		}
	default:
		return refusedNamespaceFrom
	}
	if !topology.HostnamesIntersect(l, r.Hostnames) {
		return refusedHostnames
	}
	if l.Kinds != nil {
		for _, k := range l.Kinds {
			if k.Group == r.ID.Group && k.Kind == r.ID.Kind {
				return admitted
			}
		}
		return refusedKinds
	}
	if dk := topology.DefaultRouteKinds(l.Protocol); dk != nil {
		for _, k := range dk {
			if k == r.ID.Kind {
				return admitted
			}
		}
		return refusedProtocol
	}
	return admitted
}

// words puts a refusal in words.
func (why refusalReason) words(l topology.Listener, ownerNS string, r *topology.Route) string {
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

// attachesTo reports whether route r attaches to listener section n.
func (st *state) attachesTo(r *topology.Route, n topology.NodeID) bool {
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
func (st *state) eachRouteParent(r *topology.Route, fn func(topology.NodeID) bool) {
	for _, pr := range r.ParentRefs {
		if pr.Mesh() {
			if n, ok := st.meshParent(pr); ok && !fn(n) {
				return
			}
			continue
		}
		var ls []topology.Listener
		switch pr.ID.Kind {
		case "Gateway":
			g := st.gateways[pr.ID]
			if g == nil {
				continue
			}
			ls = g.Listeners
		default:
			l := st.listenerSets[pr.ID]
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
			if !st.admits(l, pr.ID.Namespace, r) {
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
func (st *state) meshParent(pr topology.ParentRef) (topology.NodeID, bool) {
	s := st.services[pr.ID]
	if s == nil {
		return topology.NodeID{}, false
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
	if r := st.routes[rule.Object()]; r != nil && topology.IsServiceNode(b) {
		for _, pr := range r.ParentRefs {
			if pr.Mesh() && pr.ID == b {
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
	case topology.IsNamespaceNode(n), gk.Group == topology.GatewayGroup && gk.Kind == "GatewayClass":
		return dst
	case gk.Group == topology.GatewayGroup && gk.Kind == "Gateway":
		if g := st.gateways[n]; g != nil && st.classes[g.Class] {
			return append(dst, topology.NodeID{Group: topology.GatewayGroup, Kind: "GatewayClass", Name: g.Class})
		}
		return dst
	case topology.IsListenerSetGK(gk):
		if ls := st.listenerSets[n]; ls != nil {
			if g := st.gateways[ls.Parent]; g != nil && st.lsAllowed(g, ls) {
				return append(dst, g.ID)
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
	case topology.IsNamespaceNode(n):
		for c := range st.byNS[n.Name] {
			fn(c)
		}
	case gk.Group == topology.GatewayGroup && gk.Kind == "GatewayClass":
		for c := range st.gwByClass[n.Name] {
			fn(c)
		}
	case isGateway && n.Section == "":
		st.gatewayChildren(n, fn)
	case topology.IsListenerSetGK(gk) && n.Section == "":
		if ls := st.listenerSets[n]; ls != nil {
			sectionsOfList(n, ls.Listeners, fn)
		}
	case isGateway || topology.IsListenerSetGK(gk):
		st.attachedRoutes(n, fn)
	case topology.IsRouteGK(gk):
		st.routeChildren(n, fn)
	case topology.IsServiceNode(n) && n.Section == "":
		if s := st.services[n]; s != nil {
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
func sectionsOfList(n topology.NodeID, ls []topology.Listener, fn func(topology.NodeID)) {
	for _, l := range ls {
		c := n
		c.Section = l.Name
		fn(c)
	}
}

// gatewayChildren: a Gateway's listeners and the ListenerSets it allows.
func (st *state) gatewayChildren(n topology.NodeID, fn func(topology.NodeID)) {
	g := st.gateways[n]
	if g == nil {
		return
	}
	sectionsOfList(n, g.Listeners, fn)
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
		case topology.IsServiceNode(n):
			childFront = front // the ports of a Service
		}
		st.children(n, func(c topology.NodeID) { st.descend(c, childFront, seen, visit) })
	}
	if front && topology.IsServiceNode(n) && seen[n]&visitedMeshRoutes == 0 {
		seen[n] |= visitedMeshRoutes
		// The ports, when an earlier descent came to them as backends.
		st.children(n, func(c topology.NodeID) { st.descend(c, true, seen, visit) })
		st.attachedRoutes(n, func(c topology.NodeID) { st.descend(c, true, seen, visit) })
	}
}

package topology

// The hierarchy as a graph (docs/spec.md §3): the objects and the indexes
// edges are derived from, and which nodes exist. kgateway's route
// delegation is in delegation.go. Objects are put in and
// taken out in mutate.go, the walks are in walks.go, the ReferenceGrants in
// grants.go.

// Graph holds the topology objects the engine was fed and the indexes
// their edges are derived from; parents and children are computed on
// demand from them, never stored. It has no lock: its owner (the engine's
// state) guards it with its own, calls the Apply methods under its write
// lock and the walks under either lock; the walks only read.
type Graph struct {
	Classes  map[string]bool              // GatewayClasses present
	NSLabels map[string]map[string]string // Namespace labels, for allowedRoutes and ListenerSet selectors
	Gateways map[NodeID]*Gateway
	// GatewaysByClass: the Gateways of each GatewayClass name.
	GatewaysByClass map[string]map[NodeID]bool
	ListenerSets    map[NodeID]*ListenerSet
	// ListenerSetsByGateway: the ListenerSets naming each Gateway as parent.
	ListenerSetsByGateway map[NodeID]map[NodeID]bool
	Routes                map[NodeID]*Route
	// RoutesByParent: the routes whose parentRefs name each Gateway,
	// ListenerSet or Service.
	RoutesByParent map[NodeID]map[NodeID]bool
	Services       map[NodeID]*Service
	// BackendParents: the rules referencing each backend, counted.
	BackendParents map[NodeID]map[NodeID]int
	// Grants: the ReferenceGrants, which decide which cross-namespace references hold.
	Grants Grants
	// Objects counts the existence of topology objects and referenced
	// backends; Virt virtual targets and unserved kinds named by policies.
	Objects map[NodeID]int
	Virt    map[NodeID]int
	// ByNS: the existing nodes of each namespace (the Namespace node's children).
	ByNS  map[string]map[NodeID]bool
	deleg delegationState // kgateway's route delegation (delegation.go)
	// OnExists, when set, is told each time a node starts (exists true) or
	// stops existing: the engine keeps its nodes by output key with it.
	OnExists func(n NodeID, exists bool)
}

// NewGraph returns an empty graph.
func NewGraph() *Graph {
	return &Graph{
		Classes:               map[string]bool{},
		deleg:                 delegationState{routes: map[NodeID]bool{}, controllers: map[string]string{}},
		NSLabels:              map[string]map[string]string{},
		Gateways:              map[NodeID]*Gateway{},
		GatewaysByClass:       map[string]map[NodeID]bool{},
		ListenerSets:          map[NodeID]*ListenerSet{},
		ListenerSetsByGateway: map[NodeID]map[NodeID]bool{},
		Routes:                map[NodeID]*Route{},
		RoutesByParent:        map[NodeID]map[NodeID]bool{},
		Services:              map[NodeID]*Service{},
		BackendParents:        map[NodeID]map[NodeID]int{},
		Grants:                Grants{},
		Objects:               map[NodeID]int{},
		Virt:                  map[NodeID]int{},
		ByNS:                  map[string]map[NodeID]bool{},
	}
}

// Exists reports whether n is a node of the graph: an object present (or
// referenced as a backend, or a virtual target) and, for a section, one
// its object has.
func (gr *Graph) Exists(n NodeID) bool {
	o := n.Object()
	if gr.Objects[o] == 0 && gr.Virt[o] == 0 {
		return false
	}
	if n.Section == "" {
		return true
	}
	return gr.hasSection(n)
}

// hasSection reports whether n's object has section n.Section.
func (gr *Graph) hasSection(n NodeID) bool {
	o := n.Object()
	switch {
	case o.Group == GatewayGroup && o.Kind == "Gateway":
		if g := gr.Gateways[o]; g != nil {
			for _, l := range g.Listeners {
				if l.Name == n.Section {
					return true
				}
			}
		}
		return false
	case IsListenerSetGK(o.GK()):
		if ls := gr.ListenerSets[o]; ls != nil {
			for _, l := range ls.Listeners {
				if l.Name == n.Section {
					return true
				}
			}
		}
		return false
	case IsRouteGK(o.GK()):
		if r := gr.Routes[o]; r != nil {
			for _, ru := range r.Rules {
				if ru.Section == n.Section && !ru.Unnamed {
					return true
				}
			}
		}
		return false
	case o.Group == "" && o.Kind == "Service":
		if s := gr.Services[o]; s != nil {
			for _, p := range s.Ports {
				if p.Name != "" && p.Name == n.Section {
					return true
				}
			}
		}
		return false
	case o.Group == "" && o.Kind == "Namespace", o.Group == GatewayGroup && o.Kind == "GatewayClass":
		return false
	}
	return true // other backends and virtual targets: sections are not known, accept them
}

// BackendAllowed reports whether backend b hangs under route rule r: always in the route's
// namespace, in another only when a ReferenceGrant there lets the route's kind refer to it
// (Gateway API: backendRefs and RequestMirror backends across namespaces).
func (gr *Graph) BackendAllowed(r, b NodeID) bool {
	return r.Namespace == b.Namespace || gr.Grants.Allows(r.Group, r.Kind, r.Namespace, b)
}

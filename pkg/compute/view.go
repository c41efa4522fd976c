package compute

// A read-only view of the topology for request traces (docs/spec.md §9): the
// Gateways with their listeners and the routes attached to each, and the
// via of any path of the hierarchy for every policy kind.

import (
	"sort"
	"strconv"
	"time"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/fold"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// View is a consistent view of the engine's inputs. It is valid only during
// the callback of Engine.View, which holds the engine's read lock: keep the
// callback short, and copy out what must outlive it.
type View struct {
	st *state
	s  *fold.Session
}

// View calls fn with a view of the current inputs.
func (e *Engine) View(fn func(v View)) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	s := fold.Acquire(e.st.graph, e.currentMemo())
	defer s.Release()
	fn(View{st: e.st, s: s})
}

// ViewGateway is a Gateway as request matching reads it.
type ViewGateway struct {
	Namespace, Name string
	// ControllerName is the controllerName of the Gateway's GatewayClass
	// ("" when the class does not exist).
	ControllerName string
	// Listeners are the Gateway's own listeners, in spec order, then those
	// of the ListenerSets it allows, by ListenerSet namespace and name.
	Listeners []ViewListener
	id        topology.NodeID
}

// ViewRefused is a route a Gateway does not admit, and why.
type ViewRefused struct {
	Ref       v1alpha1.ObjectReference
	Hostnames []string
	// Why, in words: the first listener's refusal (allowedRoutes, hostnames,
	// kinds), or that the parentRef selects no listener.
	Why string
}

// ViewListener is one listener and the routes attached to it.
type ViewListener struct {
	Name     string
	Port     int32
	Protocol string
	Hostname string
	// ListenerSet is the ListenerSet that declares the listener (nil: the
	// Gateway).
	ListenerSet *v1alpha1.ObjectReference
	// Path is the hierarchy from its root down to the listener's section
	// node, least specific first (Namespace nodes are inserted by Vias).
	Path []v1alpha1.ObjectReference
	node topology.NodeID
}

// ViewRoute is a route attached to a listener.
type ViewRoute struct {
	Ref       v1alpha1.ObjectReference
	Hostnames []string // spec.hostnames, lower case; none: every host
	Created   time.Time
	// RuleSections are the section names of the rules' nodes: a rule's
	// name, or rule-<index+1> for an unnamed rule.
	RuleSections []string
	// Annotations are the route's kept annotations (topology.RouteAnnotations).
	Annotations map[string]string
	spec        storedSpec
}

// Spec decodes the route's spec as the cluster holds it, for the caller to
// read. It needs no lock: what the engine stored is never modified.
func (r ViewRoute) Spec() (map[string]interface{}, error) { return r.spec.decode() }

// Gateways returns the Gateway namespace/name, or every Gateway when name
// is "", sorted by namespace and name.
func (v View) Gateways(namespace, name string) []ViewGateway {
	var ids []topology.NodeID
	if name != "" {
		id := topology.NodeID{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: namespace, Name: name}
		if v.st.graph.Gateways[id] != nil {
			ids = append(ids, id)
		}
	} else {
		for id := range v.st.graph.Gateways {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return topology.LessNode(ids[i], ids[j]) })
	}
	out := make([]ViewGateway, 0, len(ids))
	for _, id := range ids {
		out = append(out, v.gateway(v.st.graph.Gateways[id]))
	}
	return out
}

func (v View) gateway(g *topology.Gateway) ViewGateway {
	st := v.st
	vg := ViewGateway{Namespace: g.ID.Namespace, Name: g.ID.Name, id: g.ID}
	var top []v1alpha1.ObjectReference
	if st.graph.Classes[g.Class] {
		vg.ControllerName = st.classControllers[g.Class]
		top = append(top, topology.NodeID{Group: topology.GatewayGroup, Kind: "GatewayClass", Name: g.Class}.Ref())
	}
	top = append(top, g.ID.Ref())
	v.addListeners(&vg, g.ID, nil, g.Listeners, top)
	sets := v.allowedSets(g)
	for _, c := range sets {
		ref := c.Ref()
		v.addListeners(&vg, c, &ref, st.graph.ListenerSets[c].Listeners, append(top[:len(top):len(top)], ref))
	}
	return vg
}

// allowedSets lists the ListenerSets g allows, sorted.
func (v View) allowedSets(g *topology.Gateway) []topology.NodeID {
	var sets []topology.NodeID
	for c := range v.st.graph.ListenerSetsByGateway[g.ID] {
		if ls := v.st.graph.ListenerSets[c]; ls != nil && v.st.graph.LSAllowed(g, ls) {
			sets = append(sets, c)
		}
	}
	sort.Slice(sets, func(i, j int) bool { return topology.LessNode(sets[i], sets[j]) })
	return sets
}

// Refused lists the routes whose parentRefs name gw (or one of its
// ListenerSets) but attach through none of its listeners, and whose
// hostnames keep accepts (nil: all), sorted.
func (v View) Refused(gw ViewGateway, keep func(hostnames []string) bool) []ViewRefused {
	g := v.st.graph.Gateways[gw.id]
	if g == nil {
		return nil
	}
	return v.refused(g, v.allowedSets(g), keep)
}

// refused lists the routes that name g or one of its allowed ListenerSets
// (sets) in a parentRef but attach through none of their listeners.
func (v View) refused(g *topology.Gateway, sets []topology.NodeID, keep func(hostnames []string) bool) []ViewRefused {
	st := v.st
	owners := map[topology.NodeID][]topology.Listener{g.ID: g.Listeners}
	for _, c := range sets {
		owners[c] = st.graph.ListenerSets[c].Listeners
	}
	var ids []topology.NodeID
	for o := range owners {
		for rid := range st.graph.RoutesByParent[o] {
			ids = append(ids, rid)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return topology.LessNode(ids[i], ids[j]) })
	var out []ViewRefused
	for i, rid := range ids {
		r := st.graph.Routes[rid]
		if r == nil || i > 0 && ids[i-1] == rid || keep != nil && !keep(r.Hostnames) {
			continue
		}
		attached := false
		st.graph.EachRouteParent(r, func(p topology.NodeID) bool {
			_, ours := owners[p.Object()]
			attached = ours
			return !attached
		})
		if attached {
			continue
		}
		out = append(out, ViewRefused{Ref: rid.Ref(), Hostnames: r.Hostnames, Why: v.why(r, owners)})
	}
	return out
}

// why says why route r attaches through no listener of owners.
func (v View) why(r *topology.Route, owners map[topology.NodeID][]topology.Listener) string {
	for _, pr := range r.ParentRefs {
		ls, ok := owners[pr.ID]
		if !ok {
			continue
		}
		for _, l := range ls {
			if pr.Section != "" && pr.Section != l.Name || pr.Port != 0 && pr.Port != l.Port {
				continue
			}
			if why := v.st.graph.Refusal(l, pr.ID.Namespace, r); why != topology.Admitted {
				return why.Words(l, pr.ID.Namespace, r)
			}
		}
		switch {
		case pr.Section != "":
			return "its parentRef names no listener " + pr.Section + " of " + pr.ID.Kind + " " + pr.ID.Namespace + "/" + pr.ID.Name
		case pr.Port != 0:
			return "its parentRef names port " + strconv.FormatInt(pr.Port, 10) + ", where " + pr.ID.Kind + " " + pr.ID.Namespace + "/" + pr.ID.Name + " has no listener"
		}
	}
	return "no listener admits it"
}

func (v View) addListeners(vg *ViewGateway, owner topology.NodeID, set *v1alpha1.ObjectReference, ls []topology.Listener, top []v1alpha1.ObjectReference) {
	for _, l := range ls {
		n := owner
		n.Section = l.Name
		vg.Listeners = append(vg.Listeners, ViewListener{
			Name: l.Name, Port: int32(l.Port), Protocol: l.Protocol, Hostname: l.Hostname,
			ListenerSet: set,
			Path:        append(top[:len(top):len(top)], n.Ref()),
			node:        n,
		})
	}
}

// Routes returns the routes attached through listener l whose hostnames
// keep accepts (nil keeps every route), sorted, and whether any route is
// attached at all (attached > 0; the count of the kept ones when there
// are some). A trace keeps the routes that serve its host: on a Gateway with
// hundreds of routes, one or two.
func (v View) Routes(l ViewListener, keep func(hostnames []string) bool) (routes []ViewRoute, attached int) {
	var ids []topology.NodeID
	// Hostnames first: they are cheap to check, attachment is not (every
	// parentRef against every listener), and a trace keeps one or two
	// routes of hundreds.
	for rid := range v.st.graph.RoutesByParent[l.node.Object()] {
		r := v.st.graph.Routes[rid]
		if r == nil || keep != nil && !keep(r.Hostnames) {
			continue
		}
		if v.st.graph.AttachesTo(r, l.node) {
			ids = append(ids, rid)
		}
	}
	attached = len(ids)
	if attached == 0 && keep != nil {
		// Whether any route is attached at all (no route for the host, or
		// none on the listener): the first one answers.
		for rid := range v.st.graph.RoutesByParent[l.node.Object()] {
			if r := v.st.graph.Routes[rid]; r != nil && v.st.graph.AttachesTo(r, l.node) {
				attached = 1
				break
			}
		}
	}
	sort.Slice(ids, func(i, j int) bool { return topology.LessNode(ids[i], ids[j]) })
	return v.viewRoutes(ids), attached
}

// viewRoutes returns the routes ids as a trace reads them.
func (v View) viewRoutes(ids []topology.NodeID) []ViewRoute {
	out := make([]ViewRoute, len(ids))
	for i, rid := range ids {
		r := v.st.graph.Routes[rid]
		vr := ViewRoute{Ref: rid.Ref(), Hostnames: r.Hostnames, Created: r.Created, spec: v.st.specs[rid],
			RuleSections: make([]string, len(r.Rules)), Annotations: r.Annotations}
		for j, ru := range r.Rules {
			vr.RuleSections[j] = ru.Section
		}
		out[i] = vr
	}
	return out
}

// DelegatedRoutes returns the child routes that rule section of route r delegates to
// (kgateway's route delegation, topology/delegation.go), sorted.
func (v View) DelegatedRoutes(r ViewRoute, section string) []ViewRoute {
	rule := topology.NodeID{Group: r.Ref.Group, Kind: r.Ref.Kind, Namespace: r.Ref.Namespace, Name: r.Ref.Name, Section: section}
	ids := append([]topology.NodeID(nil), v.st.graph.Delegation().Children(rule)...)
	sort.Slice(ids, func(i, j int) bool { return topology.LessNode(ids[i], ids[j]) })
	return v.viewRoutes(ids)
}

// KindVia is the via of one policy kind on a path.
type KindVia struct {
	Group, Kind string
	Via         []v1alpha1.ObjectReference
}

// Vias returns, for every policy kind with a policy attached on path (root
// first, sections after their objects, Namespace nodes left out: they are
// inserted as the engine inserts them), the via of that path: exactly the
// attachment points its effective entry merges (docs/spec.md §5.5), sorted by group
// and kind.
func (v View) Vias(path []v1alpha1.ObjectReference) []KindVia {
	nodes := make([]topology.NodeID, len(path))
	for i, r := range path {
		nodes[i] = topology.NodeID{Group: r.Group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Section: r.SectionName}
	}
	var out []KindVia
	for gk, k := range v.st.att.Kinds() {
		if via := v.s.Via(nodes, k); via != nil {
			out = append(out, KindVia{Group: gk.Group, Kind: gk.Kind, Via: via})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}

// BackendAllowed reports whether route may send to backend: same namespace,
// or a ReferenceGrant in the backend's namespace allows it.
func (v View) BackendAllowed(route, backend v1alpha1.ObjectReference) bool {
	r := topology.NodeID{Group: route.Group, Kind: route.Kind, Namespace: route.Namespace, Name: route.Name}
	b := topology.NodeID{Group: backend.Group, Kind: backend.Kind, Namespace: backend.Namespace, Name: backend.Name}
	return v.st.graph.BackendAllowed(r, b)
}

// ServicePort reports whether Service namespace/name exists and returns
// the name of its port numbered port: the section node a backendRef to
// that port reaches ("" when no named port has that number).
func (v View) ServicePort(namespace, name string, port int32) (section string, exists bool) {
	s := v.st.graph.Services[topology.NodeID{Kind: "Service", Namespace: namespace, Name: name}]
	if s == nil {
		return "", false
	}
	for _, p := range s.Ports {
		if p.Port == int64(port) {
			return p.Name, true
		}
	}
	return "", true
}

package topology

// The graph's mutations: the objects put in or taken out, with the indexes
// and existence counts that go with them. What a change means for outputs
// and attachments (keys, policies to re-resolve) is the engine's business.

import (
	"time"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/setmap"
)

// bump adds d to n's count in m (Objects or Virt); when n starts or stops
// existing, ByNS follows and OnExists is told.
func (gr *Graph) bump(m map[NodeID]int, n NodeID, d int) {
	was := gr.Objects[n] > 0 || gr.Virt[n] > 0
	m[n] += d
	if m[n] <= 0 {
		delete(m, n)
	}
	is := gr.Objects[n] > 0 || gr.Virt[n] > 0
	if was == is {
		return
	}
	if gr.OnExists != nil {
		gr.OnExists(n, is)
	}
	if n.Namespace != "" {
		if is {
			setmap.Add(gr.ByNS, n.Namespace, n)
		} else {
			setmap.Remove(gr.ByNS, n.Namespace, n)
		}
	}
}

// BumpVirtual adds d to the count of policies naming n as a virtual target
// (or a target of an unserved kind).
func (gr *Graph) BumpVirtual(n NodeID, d int) { gr.bump(gr.Virt, n, d) }

// ApplyGatewayClass adds GatewayClass n with its controllerName, or removes it when add
// is false.
func (gr *Graph) ApplyGatewayClass(n NodeID, add bool, controller string) {
	name := n.Name
	defer gr.deleg.changed()
	if add {
		gr.deleg.controllers[name] = controller
		if !gr.Classes[name] {
			gr.bump(gr.Objects, n, 1)
		}
		gr.Classes[name] = true
	} else if gr.Classes[name] {
		delete(gr.Classes, name)
		delete(gr.deleg.controllers, name)
		gr.bump(gr.Objects, n, -1)
	}
}

// ApplyGateway replaces Gateway n by the one spec describes, or removes it
// when add is false.
func (gr *Graph) ApplyGateway(n NodeID, add bool, spec map[string]interface{}) {
	defer gr.deleg.changed()
	if old := gr.Gateways[n]; old != nil {
		setmap.Remove(gr.GatewaysByClass, old.Class, n)
		delete(gr.Gateways, n)
		gr.bump(gr.Objects, n, -1)
	}
	if add {
		g := ParseGateway(n, spec)
		gr.Gateways[n] = g
		setmap.Add(gr.GatewaysByClass, g.Class, n)
		gr.bump(gr.Objects, n, 1)
	}
}

// ApplyListenerSet replaces ListenerSet n by the one spec describes, or
// removes it when add is false.
func (gr *Graph) ApplyListenerSet(n NodeID, add bool, spec map[string]interface{}) {
	defer gr.deleg.changed()
	if old := gr.ListenerSets[n]; old != nil {
		setmap.Remove(gr.ListenerSetsByGateway, old.Parent, n)
		delete(gr.ListenerSets, n)
		gr.bump(gr.Objects, n, -1)
	}
	if add {
		ls := ParseListenerSet(n, spec)
		gr.ListenerSets[n] = ls
		setmap.Add(gr.ListenerSetsByGateway, ls.Parent, n)
		gr.bump(gr.Objects, n, 1)
	}
}

// ApplyRoute replaces route n by the one spec describes (created at
// created, with the kept annotations ann), or removes it when add is false.
// The backends whose references changed (other than Services, which exist on
// their own) are appended to touched.
func (gr *Graph) ApplyRoute(n NodeID, add bool, spec map[string]interface{}, ann map[string]string, created time.Time, touched *[]NodeID) {
	defer gr.deleg.changed()
	delete(gr.deleg.routes, n)
	if old := gr.Routes[n]; old != nil {
		for _, pr := range old.ParentRefs {
			setmap.Remove(gr.RoutesByParent, pr.ID, n)
		}
		gr.routeBackends(old, -1, touched)
		delete(gr.Routes, n)
		gr.bump(gr.Objects, n, -1)
	}
	if add {
		r := ParseRoute(n, spec)
		r.Created = created // request traces break ties by age
		r.Annotations = ann
		gr.Routes[n] = r
		for _, ru := range r.Rules {
			if len(ru.Delegates) > 0 {
				gr.deleg.routes[n] = true
			}
		}
		for _, pr := range r.ParentRefs {
			setmap.Add(gr.RoutesByParent, pr.ID, n)
		}
		gr.routeBackends(r, 1, touched)
		gr.bump(gr.Objects, n, 1)
	}
}

func (gr *Graph) routeBackends(r *Route, d int, touched *[]NodeID) {
	for _, ru := range r.Rules {
		parent := r.ID
		parent.Section = ru.Section
		for _, b := range ru.Backends {
			setmap.AddCount(gr.BackendParents, b, parent, d)
			if b.Group != "" || b.Kind != "Service" {
				gr.bump(gr.Objects, b, d)
				*touched = append(*touched, b)
			}
		}
	}
}

// ApplyService replaces Service n by the one spec describes, or removes it
// when add is false.
func (gr *Graph) ApplyService(n NodeID, add bool, spec map[string]interface{}) {
	if gr.Services[n] != nil {
		delete(gr.Services, n)
		gr.bump(gr.Objects, n, -1)
	}
	if add {
		gr.Services[n] = ParseService(n, spec)
		gr.bump(gr.Objects, n, 1)
	}
}

// ApplyNamespace sets the labels of Namespace name (nil: none), or removes
// it when add is false.
func (gr *Graph) ApplyNamespace(name string, add bool, lbls map[string]string) {
	defer gr.deleg.changed()
	n := NamespaceNode(name)
	_, had := gr.NSLabels[name]
	if add {
		if lbls == nil {
			lbls = map[string]string{}
		}
		gr.NSLabels[name] = lbls
		if !had {
			gr.bump(gr.Objects, n, 1)
		}
	} else {
		delete(gr.NSLabels, name)
		gr.bump(gr.Objects, n, -1)
	}
}

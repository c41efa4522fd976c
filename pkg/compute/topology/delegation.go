package topology

// kgateway's route delegation (kgateway v2.2.0): a rule backendRef {group:
// gateway.networking.k8s.io, kind: HTTPRoute, name: <name, or "*" or "" for every
// HTTPRoute>, namespace} hands the rule's requests to child HTTPRoutes, which hang
// below the rule. Only kgateway does so; every other implementation rejects such a
// backendRef, so delegation is modeled below the Gateways of kgateway's GatewayClasses
// only (a route delegates when it is attached to a listener of one, or is itself an
// accepted child of a route that delegates).
//
// A child is accepted under a delegating rule as pkg/kgateway/query/route.go
// getDelegatedChildren and pkg/kgateway/translator/httproute/delegation.go,
// delegation_helpers.go accept it:
//   - it is an HTTPRoute of the named namespace (all of them for "*" or ""), found by
//     fetchRoutesByRef without any ReferenceGrant;
//   - it has no parentRefs, or one naming the parent HTTPRoute
//     (utils/delegation ChildRouteCanAttachToParentRef);
//   - it sets no hostnames (validateChildRoute);
//   - one of its rules has a match that IsDelegatedRouteMatch accepts for one of the
//     parent rule's matches (the parent's path a PathPrefix that prefixes the child's,
//     the parent's headers and query parameters among the child's, the same method), or
//     it carries delegation.kgateway.dev/inherit-parent-matcher (every rule accepted);
//   - it is not on the chain that delegates to it (a cycle: getDelegatedChildren's
//     visited set). Here the chains are walked depth first from the routes attached to
//     kgateway Gateways, in name order, and the delegation that closes a cycle is dropped.

import (
	"slices"
	"sort"
	"strings"
	"sync"
)

// KgatewayController is the controllerName of kgateway's GatewayClasses
// (pkg/kgateway/wellknown/controller.go DefaultGatewayControllerName).
const KgatewayController = "kgateway.dev/kgateway"

// The HTTPRoute annotations kgateway reads (api/annotations/delegation.go, policy.go);
// the engine keeps these of an HTTPRoute's annotations.
const (
	InheritMatcherAnnotation          = "delegation.kgateway.dev/inherit-parent-matcher"
	InheritedPolicyPriorityAnnotation = "kgateway.dev/inherited-policy-priority"
)

// RouteAnnotations are the annotations of HTTPRoutes the engine keeps.
var RouteAnnotations = []string{InheritMatcherAnnotation, InheritedPolicyPriorityAnnotation}

// DelegateRef is a rule backendRef naming HTTPRoutes: Name "" or "*" names every
// HTTPRoute of Namespace.
type DelegateRef struct{ Namespace, Name string }

// RouteMatch is an HTTPRoute match as IsDelegatedRouteMatch compares them, with the
// Gateway API defaults filled in (path PathPrefix "/", header and query type Exact).
type RouteMatch struct {
	PathType, Path string
	Headers, Query []string // "type|name|value"
	Method         string
}

// delegationState is what the graph keeps for delegation.
type delegationState struct {
	controllers map[string]string // each GatewayClass's controllerName
	routes      map[NodeID]bool   // the HTTPRoutes with a rule naming HTTPRoutes
	mu          sync.Mutex        // guards index: walks run concurrently under their owner's read lock
	index       *Delegation       // computed on demand after a change
}

// Delegation is the delegation edges of the graph, computed from its routes.
type Delegation struct {
	parents  map[NodeID][]NodeID // child route -> the delegating rules that accept it
	children map[NodeID][]NodeID // delegating rule -> its accepted child routes
}

// Parents are the rules route n is an accepted delegation child of (d may be nil).
func (d *Delegation) Parents(n NodeID) []NodeID {
	if d == nil {
		return nil
	}
	return d.parents[n]
}

// Children are the child routes rule n delegates to (d may be nil).
func (d *Delegation) Children(n NodeID) []NodeID {
	if d == nil {
		return nil
	}
	return d.children[n]
}

// Delegation returns the delegation edges (nil when no route delegates), computing them
// again after a change of the graph.
func (gr *Graph) Delegation() *Delegation {
	d := &gr.deleg
	if len(d.routes) == 0 {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.index == nil {
		d.index = buildDelegation(gr)
	}
	return d.index
}

// changed drops the delegation edges; mutations call it.
func (d *delegationState) changed() {
	d.mu.Lock()
	d.index = nil
	d.mu.Unlock()
}

func buildDelegation(gr *Graph) *Delegation {
	d := &Delegation{parents: map[NodeID][]NodeID{}, children: map[NodeID][]NodeID{}}
	roots := make([]NodeID, 0, len(gr.deleg.routes))
	for n := range gr.deleg.routes {
		roots = append(roots, n)
	}
	sort.Slice(roots, func(i, j int) bool { return LessNode(roots[i], roots[j]) })
	expanded, onChain := map[NodeID]bool{}, map[NodeID]bool{}
	var walk func(p *Route)
	walk = func(p *Route) {
		if expanded[p.ID] {
			return
		}
		expanded[p.ID], onChain[p.ID] = true, true
		for _, ru := range p.Rules {
			rule := p.ID
			rule.Section = ru.Section
			for _, c := range delegateTargets(gr, ru.Delegates) {
				if onChain[c.ID] || !acceptsChild(p, ru, c) || slices.Contains(d.children[rule], c.ID) {
					continue
				}
				d.children[rule] = append(d.children[rule], c.ID)
				d.parents[c.ID] = append(d.parents[c.ID], rule)
				if gr.deleg.routes[c.ID] {
					walk(c)
				}
			}
		}
		onChain[p.ID] = false
	}
	for _, n := range roots {
		if r := gr.Routes[n]; r != nil && onKgatewayListener(gr, r) {
			walk(r)
		}
	}
	for c := range d.parents {
		slices.SortFunc(d.parents[c], cmpNode)
	}
	return d
}

// onKgatewayListener reports whether r is attached to a listener of a Gateway (or of a
// ListenerSet of one) whose GatewayClass is kgateway's.
func onKgatewayListener(gr *Graph, r *Route) bool {
	found := false
	gr.EachRouteParent(r, func(p NodeID) bool {
		gw := p.Object()
		if IsListenerSetGK(gw.GK()) {
			ls := gr.ListenerSets[gw]
			if ls == nil {
				return true
			}
			gw = ls.Parent
		}
		if g := gr.Gateways[gw]; g != nil && gr.Classes[g.Class] && gr.deleg.controllers[g.Class] == KgatewayController {
			found = true
		}
		return !found
	})
	return found
}

// delegateTargets are the HTTPRoutes refs name, in name order.
func delegateTargets(gr *Graph, refs []DelegateRef) []*Route {
	var out []*Route
	for _, ref := range refs {
		if ref.Name != "" && ref.Name != "*" {
			if r := gr.Routes[NodeID{Group: GatewayGroup, Kind: "HTTPRoute", Namespace: ref.Namespace, Name: ref.Name}]; r != nil {
				out = append(out, r)
			}
			continue
		}
		var ns []*Route
		for n := range gr.ByNS[ref.Namespace] {
			if n.Group == GatewayGroup && n.Kind == "HTTPRoute" && n.Section == "" {
				if r := gr.Routes[n]; r != nil {
					ns = append(ns, r)
				}
			}
		}
		sort.Slice(ns, func(i, j int) bool { return ns[i].ID.Name < ns[j].ID.Name })
		out = append(out, ns...)
	}
	return out
}

// acceptsChild reports whether rule ru of route p accepts c as a delegation child.
func acceptsChild(p *Route, ru Rule, c *Route) bool {
	if c.ID.Group != GatewayGroup || c.ID.Kind != "HTTPRoute" || len(c.Hostnames) > 0 {
		return false
	}
	if c.HasParentRefs && !slices.Contains(c.RouteParents, p.ID) {
		return false
	}
	if inherits(c.Annotations) {
		return len(c.Rules) > 0
	}
	for _, pm := range ru.Matches {
		for _, cr := range c.Rules {
			for _, cm := range cr.Matches {
				if delegatedMatch(pm, cm) {
					return true
				}
			}
		}
	}
	return false
}

// inherits is ShouldInheritParentMatcher.
func inherits(ann map[string]string) bool {
	switch strings.ToLower(ann[InheritMatcherAnnotation]) {
	case "true", "yes", "enabled":
		return true
	}
	return false
}

// delegatedMatch is IsDelegatedRouteMatch.
func delegatedMatch(parent, child RouteMatch) bool {
	if parent.PathType != "PathPrefix" || !strings.HasPrefix(child.Path, parent.Path) {
		return false
	}
	for _, h := range parent.Headers {
		if !slices.Contains(child.Headers, h) {
			return false
		}
	}
	for _, q := range parent.Query {
		if !slices.Contains(child.Query, q) {
			return false
		}
	}
	return parent.Method == "" || parent.Method == child.Method
}

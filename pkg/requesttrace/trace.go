package requesttrace

import (
	"fmt"
	"strings"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/requestmatch"
)

// Topology is where a trace reads the Gateways from (*compute.Engine).
type Topology interface {
	View(fn func(v compute.View))
}

// Caller is what a trace may show the one who asked.
type Caller struct {
	// Visible reports whether objects in namespace may be named ("" is
	// the cluster scope); nil names everything.
	Visible func(namespace string) bool
	// Effective returns the targets of the EffectivePolicy namespace/name
	// as the caller may read it (redacted), nil when there is none.
	Effective func(namespace, name string) []v1alpha1.Target
}

func (c Caller) visible(ns string) bool { return c.Visible == nil || c.Visible(ns) }

// Reasons beyond requestmatch's.
const (
	// ReasonRouteHidden: a route serves the request, in a namespace the
	// caller may not read.
	ReasonRouteHidden = "RouteHidden"
)

// ErrGatewayNotFound is returned when spec.gateway names no Gateway.
type ErrGatewayNotFound struct{ Namespace, Name string }

func (e ErrGatewayNotFound) Error() string {
	return fmt.Sprintf("Gateway %s/%s not found", e.Namespace, e.Name)
}

// Trace answers spec (validated by the caller) from topo, for caller.
func Trace(topo Topology, spec v1alpha1.RequestTraceSpec, caller Caller) (v1alpha1.RequestTraceStatus, error) {
	req := request(spec)
	var (
		status  v1alpha1.RequestTraceStatus
		lookups []lookup
		err     error
	)
	topo.View(func(v compute.View) {
		var gws []compute.ViewGateway
		if g := spec.Gateway; g != nil {
			gws = v.Gateways(g.Namespace, g.Name)
			if len(gws) == 0 {
				err = ErrGatewayNotFound{Namespace: g.Namespace, Name: g.Name}
				return
			}
		} else {
			gws = v.Gateways("", "")
		}
		converted := map[v1alpha1.ObjectReference]convertedRoute{}
		for i := range gws {
			t := gatewayTrace{v: v, gw: &gws[i], req: req, caller: caller, named: spec.Gateway != nil, converted: converted}
			t.run(&status, &lookups)
		}
	})
	if err != nil {
		return status, err
	}
	caller.Effective = onceEach(caller.Effective)
	for _, l := range lookups {
		m := &status.Matches[l.match]
		if l.backend == nil {
			m.Policies = append(m.Policies, l.policies(caller)...)
		} else {
			m.BackendPolicies = append(m.BackendPolicies, l.policies(caller)...)
		}
	}
	status.Message = summary(status, spec)
	return status, nil
}

// onceEach makes effective read each EffectivePolicy once per trace: the
// matches of one route through several listeners read the same ones.
func onceEach(effective func(namespace, name string) []v1alpha1.Target) func(namespace, name string) []v1alpha1.Target {
	if effective == nil {
		return nil
	}
	seen := map[[2]string][]v1alpha1.Target{}
	return func(namespace, name string) []v1alpha1.Target {
		k := [2]string{namespace, name}
		if t, ok := seen[k]; ok {
			return t
		}
		t := effective(namespace, name)
		seen[k] = t
		return t
	}
}

// request converts the API's request for pkg/requestmatch.
func request(spec v1alpha1.RequestTraceSpec) requestmatch.Request {
	r := spec.Request
	grpc := r.GRPC
	for k, v := range r.Headers {
		if strings.EqualFold(k, "content-type") && strings.HasPrefix(strings.ToLower(v), "application/grpc") {
			grpc = true
		}
	}
	return requestmatch.Request{
		Host: r.Host, Port: spec.Port, Protocol: requestmatch.Protocol(strings.ToUpper(r.Protocol)),
		Method: r.Method, Path: r.Path, Headers: r.Headers, QueryParams: r.QueryParams, GRPC: grpc,
	}
}

// summary is the status message: why nothing matched, when nothing did.
func summary(s v1alpha1.RequestTraceStatus, spec v1alpha1.RequestTraceSpec) string {
	for _, m := range s.Matches {
		if m.Reason == string(requestmatch.ReasonMatched) || m.Reason == ReasonRouteHidden {
			return ""
		}
	}
	if len(s.Matches) > 0 {
		return "no route rule serves the request (see matches[].message)"
	}
	if s.HiddenMatches > 0 {
		return "the request is taken only by Gateways in namespaces where you may not get effectivepolicies"
	}
	where := ""
	if spec.Port != 0 {
		where = fmt.Sprintf(" on port %d", spec.Port)
	}
	return fmt.Sprintf("no Gateway serves host %q%s: no listener takes it, or no route attached to one serves it (name a Gateway in spec.gateway to see why)", spec.Request.Host, where)
}

// gatewayTrace traces the request through one Gateway.
type gatewayTrace struct {
	v      compute.View
	gw     *compute.ViewGateway
	req    requestmatch.Request
	caller Caller
	named  bool // spec.gateway names this Gateway: report why it does not take the request
	// converted holds the routes converted for matching so far (a route
	// attaches through several listeners, and Gateways): each once.
	converted map[v1alpha1.ObjectReference]convertedRoute
}

type convertedRoute struct {
	route requestmatch.Route
	ok    bool
}

// servesHost reports whether a route with these hostnames serves the
// request's host.
func (t *gatewayTrace) servesHost(hostnames []string) bool {
	return requestmatch.RouteServesHost(hostnames, t.req.Host)
}

// convert converts vr once per trace.
func (t *gatewayTrace) convert(vr compute.ViewRoute) (requestmatch.Route, bool) {
	c, seen := t.converted[vr.Ref]
	if !seen {
		c.route, c.ok = toMatchRoute(vr)
		t.converted[vr.Ref] = c
	}
	return c.route, c.ok
}

// run traces the request through the Gateway into status: the listeners
// that would take it and, on each, the route it matches or why none does.
func (t *gatewayTrace) run(status *v1alpha1.RequestTraceStatus, lookups *[]lookup) {
	gw := t.gw
	mode := hostnameMatching(gw.ControllerName)
	listeners := make([]requestmatch.Listener, len(gw.Listeners))
	for i, vl := range gw.Listeners {
		listeners[i] = requestmatch.Listener{
			Name: vl.Name, Port: vl.Port, Protocol: requestmatch.Protocol(vl.Protocol), Hostname: vl.Hostname,
			VirtualHosts: mode == MostSpecificHost,
		}
	}
	gwRef := v1alpha1.ObjectReference{Group: gatewayGroup, Kind: "Gateway", Namespace: gw.Namespace, Name: gw.Name}
	chosen, fail := requestmatch.SelectListeners(listeners, t.req)
	if len(chosen) == 0 {
		switch {
		case !t.named, !t.caller.visible(gw.Namespace):
			// Not a match: nothing to report, nor to count.
		default:
			status.Matches = append(status.Matches, v1alpha1.TraceMatch{
				Gateway: gwRef, Port: fail.Port, Reason: string(fail.Reason), Message: fail.Message,
			})
		}
		return
	}
	for _, i := range chosen {
		t.traceListener(status, lookups, &gw.Listeners[i], listeners[i], mode, gwRef)
	}
}

// traceListener traces the request on listener vl (l to requestmatch), one
// the request's port and host select, into status.
func (t *gatewayTrace) traceListener(status *v1alpha1.RequestTraceStatus, lookups *[]lookup, vl *compute.ViewListener, l requestmatch.Listener, mode string, gwRef v1alpha1.ObjectReference) {
	front := t.caller.visible(t.gw.Namespace) && (vl.ListenerSet == nil || t.caller.visible(vl.ListenerSet.Namespace))
	// Only the routes that serve the host can take the request: the
	// others are never converted (most of a trace's cost otherwise).
	routes, attached := t.v.Routes(*vl, t.servesHost)
	if len(routes) == 0 && !t.named {
		// Tracing every Gateway: a listener no route serves the host
		// through is not where the request goes (a named Gateway says
		// why instead).
		return
	}
	l, unread, hidden := t.addRoutes(l, routes)
	l, deleg := t.expandDelegation(l, routes)
	routes = append(routes[:len(routes):len(routes)], deleg.routes...)
	res := requestmatch.MatchListener(l, t.req)
	if len(routes) == 0 && attached > 0 {
		res.Reason = requestmatch.ReasonNoRouteForHost
		res.Message = fmt.Sprintf("no route on listener %s matches host %q", vl.Name, t.req.Host)
	}
	reachesVisibleRoute := res.Matched() && t.caller.visible(res.Route.Namespace)
	if !front && !reachesVisibleRoute {
		// The Gateway (or ListenerSet) is named only to those who may
		// read its namespace, or the route it brings the request to:
		// that route's parentRefs and effective policy name it anyway.
		status.HiddenMatches++
		return
	}
	status.Matches = append(status.Matches, t.listenerMatch(gwRef, vl, mode, res, hidden, unread))
	if res.Matched() {
		idx := len(status.Matches) - 1
		t.matched(&status.Matches[idx], idx, vl, routes, deleg.above, res, lookups)
	}
}

// addRoutes adds to l the routes that could be read; it returns the visible
// ones that could not, and how many of routes the caller may not see.
func (t *gatewayTrace) addRoutes(l requestmatch.Listener, routes []compute.ViewRoute) (requestmatch.Listener, []string, int) {
	var unread []string
	hidden := 0 // routes on the listener the caller may not see
	for _, vr := range routes {
		visible := t.caller.visible(vr.Ref.Namespace)
		if !visible {
			hidden++
		}
		r, ok := t.convert(vr)
		if !ok {
			if visible {
				unread = append(unread, vr.Ref.Kind+" "+vr.Ref.Namespace+"/"+vr.Ref.Name)
			}
			continue
		}
		l.Routes = append(l.Routes, r)
	}
	return l, unread, hidden
}

// listenerMatch is the entry of listener vl in the status: res, its message
// naming no route the caller may not see, and the routes left out.
func (t *gatewayTrace) listenerMatch(gwRef v1alpha1.ObjectReference, vl *compute.ViewListener, mode string, res requestmatch.Result, hidden int, unread []string) v1alpha1.TraceMatch {
	m := v1alpha1.TraceMatch{
		Gateway: gwRef, Listener: vl.Name, ListenerSet: vl.ListenerSet,
		Port: vl.Port, Protocol: vl.Protocol, HostnameMatching: mode,
		Reason: string(res.Reason), Message: res.Message,
	}
	if !res.Matched() && hidden > 0 {
		// requestmatch's messages name the routes it tried.
		m.Message = unnamedMessage(res.Reason)
	}
	if len(unread) > 0 {
		m.Message = joinMessages(m.Message, "left out, their rules could not be read: "+strings.Join(unread, ", "))
	}
	if !res.Matched() {
		m.Message = joinMessages(m.Message, t.refusals())
	}
	return m
}

const gatewayGroup = "gateway.networking.k8s.io"

// refusals names the routes the caller may see that name the Gateway and
// serve the request's host but are not admitted, and why: the usual
// reason a request a route was written for goes unmatched.
func (t *gatewayTrace) refusals() string {
	var notes []string
	for _, r := range t.v.Refused(*t.gw, t.servesHost) {
		if !t.caller.visible(r.Ref.Namespace) {
			continue
		}
		notes = append(notes, fmt.Sprintf("%s %s/%s names the Gateway but is not admitted: %s", r.Ref.Kind, r.Ref.Namespace, r.Ref.Name, r.Why))
	}
	return strings.Join(notes, "; ")
}

// unnamedMessage says why nothing matched without naming a route: for a
// caller who may not see every route of the listener.
func unnamedMessage(r requestmatch.Reason) string {
	switch r {
	case requestmatch.ReasonNoRouteForHost:
		return "no route attached to the listener serves the host"
	case requestmatch.ReasonNoRuleMatches:
		return "no rule of the routes that serve the host matches the request (routes in namespaces where you may not get effectivepolicies are not named)"
	}
	return "no route serves the request"
}

func joinMessages(a, b string) string {
	if b == "" {
		return a
	}
	if a == "" {
		return b
	}
	return a + "; " + b
}

// matched fills in the route, rule, backends and the policy lookups of a
// match.
// above holds, for a route a rule delegates to, the nodes between the listener and it.
func (t *gatewayTrace) matched(m *v1alpha1.TraceMatch, idx int, vl *compute.ViewListener, routes []compute.ViewRoute, above map[v1alpha1.ObjectReference][]v1alpha1.ObjectReference, res requestmatch.Result, lookups *[]lookup) {
	var vr *compute.ViewRoute
	for i := range routes {
		r := &routes[i]
		if r.Ref.Kind == string(res.Route.Kind) && r.Ref.Namespace == res.Route.Namespace && r.Ref.Name == res.Route.Name {
			vr = r
			break
		}
	}
	if vr == nil || res.Rule == nil || res.Rule.Index >= len(vr.RuleSections) {
		return // cannot happen: the result names a route of the listener
	}
	if !t.caller.visible(vr.Ref.Namespace) {
		m.Reason = ReasonRouteHidden
		m.Message = "a route in a namespace where you may not get effectivepolicies serves the request"
		return
	}
	route := vr.Ref
	m.Route = &route
	m.Rule = &v1alpha1.TraceRule{Index: int32(res.Rule.Index), Name: res.Rule.Name, MatchIndex: int32(res.Rule.MatchIndex)}

	rulePath := append(append(append([]v1alpha1.ObjectReference(nil), vl.Path...), above[route]...), route)
	if chain := above[route]; len(chain) >= 2 && t.caller.visible(chain[len(chain)-1].Namespace) {
		by := chain[len(chain)-1]
		m.Message = joinMessages(m.Message, "delegated by rule "+by.SectionName+" of HTTPRoute "+by.Namespace+"/"+by.Name+" (kgateway route delegation)")
	}
	rule := route
	rule.SectionName = vr.RuleSections[res.Rule.Index]
	rulePath = append(rulePath, rule)
	*lookups = append(*lookups, lookup{
		match: idx, target: route, section: rule.SectionName,
		path: rulePath, vias: t.v.Vias(rulePath),
	})
	for _, b := range res.Backends {
		ref := v1alpha1.ObjectReference{Group: b.Group, Kind: b.Kind, Namespace: b.Namespace, Name: b.Name}
		if ref.Group == "core" {
			ref.Group = ""
		}
		if !t.caller.visible(ref.Namespace) {
			m.HiddenBackends++
			continue
		}
		tb := v1alpha1.TraceBackend{Ref: ref, Port: b.Port, Weight: b.Weight}
		if !t.v.BackendAllowed(route, ref) {
			tb.Message = fmt.Sprintf("no ReferenceGrant in namespace %s allows %s from namespace %s to reference it", ref.Namespace, route.Kind, route.Namespace)
			m.Backends = append(m.Backends, tb)
			continue
		}
		path := append(rulePath[:len(rulePath):len(rulePath)], ref)
		section := ""
		if ref.Group == "" && ref.Kind == "Service" {
			port := int32(0)
			if b.Port != nil {
				port = *b.Port
			}
			name, exists := t.v.ServicePort(ref.Namespace, ref.Name, port)
			if !exists {
				tb.Message = fmt.Sprintf("Service %s/%s not found", ref.Namespace, ref.Name)
			}
			if name != "" {
				section = name
				portRef := ref
				portRef.SectionName = name
				path = append(path, portRef)
			}
		}
		m.Backends = append(m.Backends, tb)
		backend := ref
		*lookups = append(*lookups, lookup{
			match: idx, target: ref, section: section, backend: &backend,
			path: path, vias: t.v.Vias(path),
		})
	}
}

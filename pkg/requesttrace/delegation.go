package requesttrace

// kgateway's route delegation in a trace (kgateway v2.2.0,
// pkg/kgateway/translator/httproute/delegation.go and delegation_helpers.go): on a kgateway
// Gateway a rule that delegates to child HTTPRoutes has no route of its own; each accepted
// child's rules take its place, with the matches that are valid under one of the delegating
// rule's (IsDelegatedRouteMatch) or, for a child with inherit-parent-matcher, merged with them
// (mergeParentChildRouteMatch), and the parent's hostnames. The request then ends at the
// child's rule, whose path runs through the delegating route and rule. A delegating rule
// without accepted children keeps its matches: kgateway answers those requests itself.

import (
	"path"
	"strings"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/requestmatch"
)

// neverMatches stands for the matches of a rule that has no route of its own: no request
// has this method.
var neverMatches = []requestmatch.HTTPRouteMatch{{Method: "\x00delegated"}}

// delegation is what expanding a listener's delegating rules found: the child routes to
// match too, and for each the nodes above it below the listener (delegating route, its
// rule, ..., root first).
type delegation struct {
	routes []compute.ViewRoute
	above  map[v1alpha1.ObjectReference][]v1alpha1.ObjectReference
}

// expandDelegation adds to l the child routes of its delegating rules, recursively, when the
// Gateway is kgateway's; routes are the listener's routes as the view gives them.
func (t *gatewayTrace) expandDelegation(l requestmatch.Listener, routes []compute.ViewRoute) (requestmatch.Listener, delegation) {
	d := delegation{above: map[v1alpha1.ObjectReference][]v1alpha1.ObjectReference{}}
	if t.gw.ControllerName != topology.KgatewayController {
		return l, d
	}
	byRef := map[v1alpha1.ObjectReference]compute.ViewRoute{}
	for _, vr := range routes {
		byRef[vr.Ref] = vr
	}
	n := len(l.Routes)
	for i := 0; i < n; i++ {
		ref := v1alpha1.ObjectReference{Group: gatewayGroup, Kind: string(l.Routes[i].Kind), Namespace: l.Routes[i].Namespace, Name: l.Routes[i].Name}
		if vr, ok := byRef[ref]; ok && ref.Kind == "HTTPRoute" {
			t.expandRoute(&l, i, vr, nil, map[v1alpha1.ObjectReference]bool{ref: true}, &d)
		}
	}
	return l, d
}

// expandRoute replaces the matches of the delegating rules of l.Routes[i] (vr, below the
// nodes above) by the child routes it adds to l; onChain guards against cycles.
func (t *gatewayTrace) expandRoute(l *requestmatch.Listener, i int, vr compute.ViewRoute, above []v1alpha1.ObjectReference, onChain map[v1alpha1.ObjectReference]bool, d *delegation) {
	for ri := range l.Routes[i].Rules {
		if ri >= len(vr.RuleSections) || !delegates(l.Routes[i].Rules[ri]) {
			continue
		}
		children := t.v.DelegatedRoutes(vr, vr.RuleSections[ri])
		parent := l.Routes[i]
		parentMatches := parent.Rules[ri].Matches
		ruleRef := vr.Ref
		ruleRef.SectionName = vr.RuleSections[ri]
		chain := append(append(above[:len(above):len(above)], vr.Ref), ruleRef)
		added := false
		for _, cv := range children {
			if onChain[cv.Ref] {
				continue
			}
			if _, seen := d.above[cv.Ref]; seen {
				continue // one place per route: the first delegating rule found
			}
			c, ok := t.convert(cv)
			if !ok {
				continue
			}
			c = childRoute(c, parent.Hostnames, parentMatches, inheritsMatcher(cv.Annotations))
			added = true
			l.Routes = append(l.Routes, c)
			d.routes = append(d.routes, cv)
			d.above[cv.Ref] = chain
			onChain[cv.Ref] = true
			t.expandRoute(l, len(l.Routes)-1, cv, chain, onChain, d)
			delete(onChain, cv.Ref)
		}
		if added {
			rules := append([]requestmatch.Rule(nil), l.Routes[i].Rules...)
			rules[ri].Matches = neverMatches
			l.Routes[i].Rules = rules
		}
	}
}

// delegates reports whether a rule has a backendRef naming HTTPRoutes.
func delegates(r requestmatch.Rule) bool {
	for _, b := range r.BackendRefs {
		if b.Group == gatewayGroup && b.Kind == "HTTPRoute" {
			return true
		}
	}
	return false
}

func inheritsMatcher(ann map[string]string) bool {
	switch strings.ToLower(ann[topology.InheritMatcherAnnotation]) {
	case "true", "yes", "enabled":
		return true
	}
	return false
}

// childRoute is child as kgateway routes it below a delegating rule with matches pms.
func childRoute(child requestmatch.Route, hostnames []string, pms []requestmatch.HTTPRouteMatch, inherit bool) requestmatch.Route {
	child.Hostnames = hostnames
	rules := make([]requestmatch.Rule, len(child.Rules))
	for ri, r := range child.Rules {
		var valid []requestmatch.HTTPRouteMatch
		for _, pm := range pms {
			for _, cm := range r.Matches {
				switch {
				case inherit:
					valid = append(valid, mergedMatch(pm, cm))
				case delegatedMatch(pm, cm):
					valid = append(valid, cm)
				}
			}
		}
		r.Matches = valid
		if len(valid) == 0 {
			r.Matches = neverMatches
		}
		rules[ri] = r
	}
	child.Rules = rules
	return child
}

// delegatedMatch is utils/delegation IsDelegatedRouteMatch.
func delegatedMatch(parent, child requestmatch.HTTPRouteMatch) bool {
	pt, pv := pathOf(parent)
	_, cv := pathOf(child)
	if pt != requestmatch.PathMatchPathPrefix || !strings.HasPrefix(cv, pv) {
		return false
	}
	for _, h := range parent.Headers {
		if !containsHeader(child.Headers, h) {
			return false
		}
	}
	for _, q := range parent.QueryParams {
		if !containsHeader(queryAsHeaders(child.QueryParams), requestmatch.HeaderMatch(q)) {
			return false
		}
	}
	return parent.Method == "" || parent.Method == child.Method
}

// containsHeader reports whether hs holds h, the type Exact when unset (reflect.DeepEqual
// on matches the API server defaulted).
func containsHeader(hs []requestmatch.HeaderMatch, h requestmatch.HeaderMatch) bool {
	for _, c := range hs {
		if exact(c.Type) == exact(h.Type) && c.Name == h.Name && c.Value == h.Value {
			return true
		}
	}
	return false
}

func exact(t requestmatch.MatchType) requestmatch.MatchType {
	if t == "" {
		return requestmatch.MatchExact
	}
	return t
}

func queryAsHeaders(qs []requestmatch.QueryParamMatch) []requestmatch.HeaderMatch {
	out := make([]requestmatch.HeaderMatch, len(qs))
	for i, q := range qs {
		out[i] = requestmatch.HeaderMatch(q)
	}
	return out
}

// pathOf is a match's path with the API's defaults (PathPrefix "/").
func pathOf(m requestmatch.HTTPRouteMatch) (requestmatch.PathMatchType, string) {
	if m.Path == nil {
		return requestmatch.PathMatchPathPrefix, "/"
	}
	t := m.Path.Type
	if t == "" {
		t = requestmatch.PathMatchPathPrefix
	}
	return t, m.Path.Value
}

// mergedMatch is mergeParentChildRouteMatch: the paths joined, the parent's headers, query
// parameters and method first.
func mergedMatch(parent, child requestmatch.HTTPRouteMatch) requestmatch.HTTPRouteMatch {
	_, pv := pathOf(parent)
	ct, cv := requestmatch.PathMatchPathPrefix, ""
	if child.Path != nil {
		ct, cv = child.Path.Type, child.Path.Value
	}
	out := requestmatch.HTTPRouteMatch{Path: &requestmatch.HTTPPathMatch{Type: ct, Value: path.Join(pv, cv)}, Method: child.Method}
	out.Headers = append(out.Headers, parent.Headers...)
	for _, h := range child.Headers {
		if !hasHeaderName(parent.Headers, h.Name) {
			out.Headers = append(out.Headers, h)
		}
	}
	out.QueryParams = append(out.QueryParams, parent.QueryParams...)
	for _, q := range child.QueryParams {
		dup := false
		for _, p := range parent.QueryParams {
			dup = dup || p.Name == q.Name
		}
		if !dup {
			out.QueryParams = append(out.QueryParams, q)
		}
	}
	if parent.Method != "" {
		out.Method = parent.Method
	}
	return out
}

func hasHeaderName(hs []requestmatch.HeaderMatch, name string) bool {
	for _, h := range hs {
		if h.Name == name {
			return true
		}
	}
	return false
}

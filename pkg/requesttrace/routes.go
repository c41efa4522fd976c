package requesttrace

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/requestmatch"
)

// routeSpec is the part of a route's spec that matching reads, with the
// Gateway API's JSON names (HTTPRoute, GRPCRoute, TLSRoute, TCPRoute and
// UDPRoute share them; only the match types differ).
type routeSpec struct {
	Hostnames []string   `json:"hostnames,omitempty"`
	Rules     []ruleSpec `json:"rules,omitempty"`
}

type ruleSpec struct {
	Name        string                    `json:"name,omitempty"`
	Matches     []map[string]interface{}  `json:"matches,omitempty"`
	BackendRefs []requestmatch.BackendRef `json:"backendRefs,omitempty"`
}

// toMatchRoute converts a route of the view for pkg/requestmatch. ok is
// false when its spec or rules do not decode (the CRD's schema makes that
// unlikely): the caller leaves the route out and says so.
func toMatchRoute(vr compute.ViewRoute) (r requestmatch.Route, ok bool) {
	r = requestmatch.Route{
		Kind:              requestmatch.RouteKind(vr.Ref.Kind),
		Namespace:         vr.Ref.Namespace,
		Name:              vr.Ref.Name,
		CreationTimestamp: vr.Created,
	}
	raw, err := vr.Spec()
	if err != nil {
		return r, false
	}
	var spec routeSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &spec); err != nil {
		return r, false
	}
	r.Hostnames = spec.Hostnames
	r.Rules = make([]requestmatch.Rule, len(spec.Rules))
	for i, rs := range spec.Rules {
		rule := requestmatch.Rule{Name: rs.Name, BackendRefs: rs.BackendRefs}
		for _, m := range rs.Matches {
			if !addMatch(&rule, r.Kind, m) {
				return r, false
			}
		}
		if r.Kind == requestmatch.KindHTTPRoute && len(rs.Matches) == 0 {
			// The HTTPRoute CRD defaults matches to one PathPrefix "/" match:
			// a cluster's routes carry it, manifests read offline may not.
			// Filled in here, both answer matchIndex 0.
			rule.Matches = []requestmatch.HTTPRouteMatch{defaultHTTPMatch}
		}
		r.Rules[i] = rule
	}
	return r, true
}

var defaultHTTPMatch = requestmatch.HTTPRouteMatch{Path: &requestmatch.HTTPPathMatch{Type: requestmatch.PathMatchPathPrefix, Value: "/"}}

// addMatch appends one match of a route of kind k to rule.
func addMatch(rule *requestmatch.Rule, k requestmatch.RouteKind, m map[string]interface{}) bool {
	switch k {
	case requestmatch.KindGRPCRoute:
		var gm requestmatch.GRPCRouteMatch
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &gm); err != nil {
			return false
		}
		rule.GRPCMatches = append(rule.GRPCMatches, gm)
	default:
		var hm requestmatch.HTTPRouteMatch
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &hm); err != nil {
			return false
		}
		rule.Matches = append(rule.Matches, hm)
	}
	return true
}

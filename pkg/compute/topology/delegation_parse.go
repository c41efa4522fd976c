package topology

import "strings"

// What ParseRoute reads for delegation (delegation.go): the HTTPRoute parentRefs, the
// rule backendRefs naming HTTPRoutes and the rules' matches.

// delegateRef reads a backendRef naming HTTPRoutes (backendref.IsDelegatedHTTPRoute); its
// namespace defaults to the route's (krtcollections toFromBackendRef).
func delegateRef(ref map[string]interface{}, ns string) (DelegateRef, bool) {
	if StringField(ref, "group") != GatewayGroup || StringField(ref, "kind") != "HTTPRoute" {
		return DelegateRef{}, false
	}
	if n := StringField(ref, "namespace"); n != "" {
		ns = n
	}
	return DelegateRef{Namespace: ns, Name: StringField(ref, "name")}, true
}

// parseMatches reads an HTTPRoute rule's matches with the Gateway API defaults the API
// server fills in (no matches: one PathPrefix "/"; a match without path: PathPrefix "/").
func parseMatches(rule map[string]interface{}) []RouteMatch {
	ms, set := rule["matches"].([]interface{})
	if !set {
		return []RouteMatch{{PathType: "PathPrefix", Path: "/"}}
	}
	out := make([]RouteMatch, 0, len(ms))
	for _, m := range maps(ms) {
		rm := RouteMatch{PathType: "PathPrefix", Path: "/", Method: StringField(m, "method")}
		if p := MapField(m, "path"); p != nil {
			if t := StringField(p, "type"); t != "" {
				rm.PathType = t
			}
			if v, ok := p["value"].(string); ok {
				rm.Path = v
			}
		}
		rm.Headers = nameValues(lget(m, "headers"))
		rm.Query = nameValues(lget(m, "queryParams"))
		out = append(out, rm)
	}
	return out
}

// nameValues renders header or query parameter matches as "type|name|value", the type
// Exact by default, for IsDelegatedRouteMatch's equality.
func nameValues(l []interface{}) []string {
	var out []string
	for _, h := range maps(l) {
		t := StringField(h, "type")
		if t == "" {
			t = "Exact"
		}
		out = append(out, strings.Join([]string{t, StringField(h, "name"), StringField(h, "value")}, "|"))
	}
	return out
}

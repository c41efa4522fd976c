package requestmatch

// Reason says how far a request got.
type Reason string

// Reasons, in the order a request meets them.
const (
	ReasonMatched           Reason = "Matched"
	ReasonNoListeners       Reason = "NoListeners"
	ReasonNoListenerOnPort  Reason = "NoListenerOnPort"
	ReasonNoListenerForHost Reason = "NoListenerForHost"
	ReasonNoRoutes          Reason = "NoRoutes"
	ReasonNoRouteForHost    Reason = "NoRouteForHost"
	ReasonNoRuleMatches     Reason = "NoRuleMatches"
)

// RouteRef names the chosen route.
type RouteRef struct {
	Kind      RouteKind `json:"kind"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
}

// RuleRef names the chosen rule of the route. MatchIndex is the index of the
// match that won within the rule, -1 when the rule has no matches (the
// defaults apply) or the route kind has none.
type RuleRef struct {
	Index      int    `json:"index"`
	Name       string `json:"name,omitempty"`
	MatchIndex int    `json:"matchIndex"`
}

// Backend is a backendRef with the API's defaults filled in: group "" (core),
// kind Service, the route's namespace, weight 1.
type Backend struct {
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Port      *int32 `json:"port,omitempty"`
	Weight    int32  `json:"weight"`
}

// Result is what one listener of a Gateway does with the request. When
// Reason is not Matched, the fields up to the stage that failed are set and
// Message says, in words, why nothing matched.
type Result struct {
	GatewayNamespace string    `json:"gatewayNamespace,omitempty"`
	GatewayName      string    `json:"gatewayName,omitempty"`
	Listener         string    `json:"listener,omitempty"`
	Port             int32     `json:"port,omitempty"`
	Protocol         Protocol  `json:"protocol,omitempty"`
	Route            *RouteRef `json:"route,omitempty"`
	Rule             *RuleRef  `json:"rule,omitempty"`
	Backends         []Backend `json:"backends,omitempty"`
	Reason           Reason    `json:"reason"`
	Message          string    `json:"message,omitempty"`
}

// Matched reports whether a rule was chosen.
func (r Result) Matched() bool { return r.Reason == ReasonMatched }

// matched fills a Result for rule ruleIdx (match matchIdx) of route rt.
func matched(l *Listener, rt *Route, ruleIdx, matchIdx int) Result {
	res := listenerResult(l)
	res.Reason = ReasonMatched
	res.Route = &RouteRef{Kind: rt.Kind, Namespace: rt.Namespace, Name: rt.Name}
	rule := &rt.Rules[ruleIdx]
	res.Rule = &RuleRef{Index: ruleIdx, Name: rule.Name, MatchIndex: matchIdx}
	res.Backends = backends(rt.Namespace, rule.BackendRefs)
	if len(res.Backends) == 0 {
		// Still a match: the Gateway answers it itself (HTTP 500 for an
		// HTTPRoute), which is worth saying.
		res.Message = "the rule has no backendRefs"
	}
	return res
}

// listenerResult is a Result with the listener part filled in.
func listenerResult(l *Listener) Result {
	return Result{Listener: l.Name, Port: l.Port, Protocol: l.Protocol}
}

// backends applies the backendRef defaults of the Gateway API
// (BackendObjectReference and BackendRef.Weight).
func backends(routeNamespace string, refs []BackendRef) []Backend {
	if len(refs) == 0 {
		return nil
	}
	out := make([]Backend, 0, len(refs))
	for _, ref := range refs {
		b := Backend{Group: ref.Group, Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name, Weight: 1}
		if b.Kind == "" {
			b.Kind = "Service"
		}
		if b.Namespace == "" {
			b.Namespace = routeNamespace
		}
		if ref.Port != nil {
			p := *ref.Port
			b.Port = &p
		}
		if ref.Weight != nil {
			b.Weight = *ref.Weight
		}
		out = append(out, b)
	}
	return out
}

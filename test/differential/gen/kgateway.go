package gen

import (
	"fmt"
	"math/rand/v2"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// KgatewayGroup is kgateway's policy API group.
const KgatewayGroup = "gateway.kgateway.dev"

// TP is kgateway's TrafficPolicy.
const TP = "TrafficPolicy"

// KgatewayController is the GatewayClass controllerName kgateway translates for.
const KgatewayController = "kgateway.dev/kgateway"

// Kgateway annotations: the weight that orders the policies of one level
// (pluginsdk/utils/policy.go), and the priority a delegating route gives its
// policies over its children's (api/annotations/policy.go).
const (
	WeightAnnotation   = "kgateway.dev/policy-weight"
	PriorityAnnotation = "kgateway.dev/inherited-policy-priority"
)

// KgatewayUnits are the TrafficPolicy merge units the generator sets
// (trafficpolicy/merge.go MergeTrafficPolicies merges each whole), as JSON
// pointers in the spec; each value policy k sets names k.
var KgatewayUnits = []Field{
	{"/timeouts", func(spec map[string]any, k int) { spec["timeouts"] = map[string]any{"request": fmt.Sprintf("%ds", k)} }},
	{"/retry", func(spec map[string]any, k int) {
		spec["retry"] = map[string]any{"attempts": int64(k), "retryOn": []any{"5xx"}}
	}},
	{"/cors", func(spec map[string]any, k int) {
		spec["cors"] = map[string]any{"allowOrigins": []any{fmt.Sprintf("https://p%d.example.com", k)}}
	}},
	{"/headerModifiers", func(spec map[string]any, k int) {
		spec["headerModifiers"] = map[string]any{"request": map[string]any{
			"set": []any{map[string]any{"name": "x-policy", "value": fmt.Sprintf("p%d", k)}}}}
	}},
	{"/buffer", func(spec map[string]any, k int) {
		spec["buffer"] = map[string]any{"maxRequestSize": fmt.Sprintf("%dKi", k)}
	}},
	{"/rateLimit/local", func(spec map[string]any, k int) {
		spec["rateLimit"] = map[string]any{"local": map[string]any{
			"tokenBucket": map[string]any{"maxTokens": int64(k), "fillInterval": "1s"}}}
	}},
	{"/csrf", func(spec map[string]any, k int) { spec["csrf"] = map[string]any{"percentageEnabled": int64(k)} }},
}

// generateKgateway writes a kgateway topology: HTTP listeners only (TrafficPolicy
// acts on HTTP routes), HTTPRoutes whose rules match a path prefix naming the
// route and rule (so kgateway's Envoy routes say which rule they are), and
// TrafficPolicies on Gateways, listeners, routes and rules with overlapping
// merge units. Unlike Generate's, policies are stamped in an order of their
// own, not by name (kgateway reads creation times), and now and then carry a
// policy weight.
func generateKgateway(seed uint64, f Features) *Case {
	prefix := fmt.Sprintf("df%d", seed)
	g := &generator{
		r:        rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)),
		f:        f,
		prefix:   prefix,
		ns:       []string{prefix + "-a", prefix + "-b"},
		services: map[string]bool{},
		c:        &Case{Seed: seed, Prefix: prefix},
	}
	g.add(obj(gwv1, "GatewayClass", "", prefix, map[string]any{"controllerName": KgatewayController}))
	for _, ns := range g.ns {
		g.add(obj("v1", "Namespace", "", ns, nil))
	}
	k := kgGenerator{g}
	k.kgGateways()
	k.kgRoutes()
	if g.chance(0.35) {
		k.kgDelegate()
	}
	for _, ns := range g.ns {
		if g.services[ns+"/backend"] {
			g.add(obj("v1", "Service", ns, "backend", map[string]any{
				"ports": []any{map[string]any{"name": "p", "port": int64(8080), "protocol": "TCP"}}}))
		}
	}
	k.kgPolicies()
	k.kgKinds(seed)
	k.kgOrder()
	return g.c
}

// kgGenerator is the generator's kgateway part.
type kgGenerator struct{ *generator }

func (g kgGenerator) kgGateways() {
	n := 1 + g.pick(2)
	port := int64(8000)
	for i := 0; i < n; i++ {
		gw := &gateway{ns: g.ns[0], name: fmt.Sprintf("gw%d", i+1)}
		if i > 0 && g.chance(0.3) {
			gw.ns = g.ns[1]
		}
		for j := 0; j < 1+g.pick(3); j++ {
			gw.listeners = append(gw.listeners, listener{name: fmt.Sprintf("l%d", j+1), protocol: "HTTP", port: port,
				hostname: httpHostnames[g.pick(len(httpHostnames))]})
			port++
		}
		g.gateways = append(g.gateways, gw)
		g.add(obj(gwv1, "Gateway", gw.ns, gw.name, map[string]any{
			"gatewayClassName": g.prefix, "listeners": g.listenerSpecs(gw.listeners)}))
	}
}

func (g kgGenerator) kgRoutes() {
	ps := g.parents()
	n := 1 + g.pick(5)
	for i := 0; i < n; i++ {
		r := &route{kind: "HTTPRoute", ns: g.nsPick(), name: fmt.Sprintf("r%d", i+1)}
		p := ps[g.pick(len(ps))]
		refs := []any{g.parentRef(p, r.ns)}
		if q := ps[g.pick(len(ps))]; g.chance(0.3) && (q.name != p.name || q.ns != p.ns || q.l.name != p.l.name) {
			second := g.parentRef(q, r.ns)
			if q.ns == p.ns && q.name == p.name {
				refs[0].(map[string]any)["sectionName"] = p.l.name
				second["sectionName"] = q.l.name
			}
			refs = append(refs, second)
		}
		spec := map[string]any{"parentRefs": refs}
		if h := g.routeHostnames(r.kind); h != nil {
			spec["hostnames"] = h
		}
		var rules []any
		for j := 0; j < 1+g.pick(3); j++ {
			rule := map[string]any{"matches": []any{map[string]any{"path": map[string]any{
				"type": "PathPrefix", "value": KgatewayRulePath(r.ns, r.name, j)}}},
				"backendRefs": []any{map[string]any{"name": "backend", "port": int64(8080)}}}
			name := ""
			if g.chance(0.6) {
				name = fmt.Sprintf("rule%d", j+1)
				rule["name"] = name
			}
			r.rules = append(r.rules, name)
			rules = append(rules, rule)
		}
		spec["rules"] = rules
		g.services[r.ns+"/backend"] = true
		o := obj(gwv1, r.kind, r.ns, r.name, spec)
		if g.chance(0.15) {
			o.SetAnnotations(map[string]string{PriorityAnnotation: []string{"ShallowMergePreferParent", "ShallowMergePreferChild"}[g.pick(2)]})
		}
		g.routes = append(g.routes, r)
		g.add(o)
	}
}

// kgDelegate gives a route a rule delegating to a child route of its own
// (kgateway's route delegation: a backendRef of kind HTTPRoute), whose rules
// match under the parent rule's prefix and which names no parent itself.
func (g kgGenerator) kgDelegate() {
	parent := g.routes[g.pick(len(g.routes))]
	child := &route{kind: "HTTPRoute", ns: parent.ns, name: fmt.Sprintf("r%d", len(g.routes)+1)}
	if g.chance(0.2) {
		child.ns = g.ns[(indexOf(g.ns, parent.ns)+1)%len(g.ns)]
	}
	ref := map[string]any{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": child.name}
	if child.ns != parent.ns {
		ref["namespace"] = child.ns
	}
	rule := map[string]any{"matches": []any{map[string]any{"path": map[string]any{
		"type": "PathPrefix", "value": KgatewayDelegationPath(child.ns, child.name)}}}, "backendRefs": []any{ref}}
	name := ""
	if g.chance(0.6) {
		name = fmt.Sprintf("rule%d", len(parent.rules)+1)
		rule["name"] = name
	}
	for _, o := range g.c.Topology {
		if o.GetKind() == parent.kind && o.GetNamespace() == parent.ns && o.GetName() == parent.name {
			rules, _, _ := unstructured.NestedSlice(o.Object, "spec", "rules")
			_ = unstructured.SetNestedSlice(o.Object, append(rules, rule), "spec", "rules")
			// The annotation matters only on a delegating route: give it one more often.
			if o.GetAnnotations() == nil && g.chance(0.4) {
				o.SetAnnotations(map[string]string{PriorityAnnotation: []string{"ShallowMergePreferParent", "ShallowMergePreferChild"}[g.pick(2)]})
			}
		}
	}
	parent.rules = append(parent.rules, name)
	var rules []any
	for j := 0; j < 1+g.pick(2); j++ {
		rule := map[string]any{"matches": []any{map[string]any{"path": map[string]any{
			"type": "PathPrefix", "value": KgatewayRulePath(child.ns, child.name, j)}}},
			"backendRefs": []any{map[string]any{"name": "backend", "port": int64(8080)}}}
		name := ""
		if g.chance(0.6) {
			name = fmt.Sprintf("rule%d", j+1)
			rule["name"] = name
		}
		child.rules = append(child.rules, name)
		rules = append(rules, rule)
	}
	g.services[child.ns+"/backend"] = true
	g.routes = append(g.routes, child)
	g.add(obj(gwv1, child.kind, child.ns, child.name, map[string]any{"rules": rules}))
}

// KgatewayDelegationPath is the path prefix of a rule delegating to route ns/name:
// the rules of that route match under it.
func KgatewayDelegationPath(ns, name string) string { return fmt.Sprintf("/%s/%s", ns, name) }

// KgatewayRulePath is the path prefix rule i of route ns/name matches.
func KgatewayRulePath(ns, name string, i int) string { return fmt.Sprintf("/%s/%s/%d", ns, name, i) }

func (g kgGenerator) kgPolicies() {
	ts := g.targets(TP)
	n := 1 + g.pick(7)
	for i := 0; i < n; i++ {
		g.policyN++
		t := ts[g.pick(len(ts))]
		refs := []any{g.targetRef(t)}
		if u := ts[g.pick(len(ts))]; g.chance(0.2) && u.ns == t.ns {
			if ref := g.targetRef(u); !sameRef(refs[0], ref) {
				refs = append(refs, ref)
			}
		}
		spec := map[string]any{"targetRefs": refs}
		for len(spec) == 1 {
			for _, f := range KgatewayUnits {
				if g.chance(0.35) {
					f.Set(spec, g.policyN)
				}
			}
		}
		// The CRD admits retry on a Gateway only with a sectionName.
		for _, ref := range refs {
			if m := ref.(map[string]any); m["kind"] == "Gateway" && m["sectionName"] == nil {
				delete(spec, "retry")
			}
		}
		if len(spec) == 1 {
			KgatewayUnits[0].Set(spec, g.policyN)
		}
		o := obj(KgatewayGroup+"/v1alpha1", TP, t.ns, fmt.Sprintf("p%02d-tp", g.policyN), spec)
		if g.chance(0.15) {
			o.SetAnnotations(map[string]string{WeightAnnotation: fmt.Sprint(g.pick(3))})
		}
		g.c.Policies = append(g.c.Policies, o)
	}
	// Creation order of their own: shuffle, so that age and name disagree now and then.
	g.r.Shuffle(len(g.c.Policies), func(i, j int) { g.c.Policies[i], g.c.Policies[j] = g.c.Policies[j], g.c.Policies[i] })
}

// kgOrder stamps the objects one second apart in the order they are listed,
// the topology first: kgateway's translator harness stamps its input that way
// (test/translator TestCase.Run), whatever the objects say.
func (g kgGenerator) kgOrder() {
	for i, o := range g.c.Objects() {
		o.SetCreationTimestamp(metaTime(BaseTime.Add(time.Duration(i) * time.Second)))
	}
}

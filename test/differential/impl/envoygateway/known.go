package envoygateway

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// The disagreements with Envoy Gateway v1.9.0 docs/differential.md
// explains, each as narrow as its cause (github.com/envoyproxy/gateway
// v1.9.0 internal/gatewayapi).
const (
	ClassEGTCPAuthorization = "eg-bug-tcp-authorization-on-other-route"
	ClassEGStatusPerSection = "status-per-ancestor-section"
	ClassEGEEPOnL4Route     = "eep-conflict-on-l4-route"
)

func init() {
	differential.RegisterKnown(differential.KnownClass{Name: ClassEGTCPAuthorization, Impl: "envoygateway", Match: egTCPAuthorizationLeak})
	differential.RegisterKnown(differential.KnownClass{Name: ClassEGStatusPerSection, Impl: "envoygateway", Match: egStatusPerSection})
	differential.RegisterKnown(differential.KnownClass{Name: ClassEGEEPOnL4Route, Impl: "envoygateway", Match: egEEPConflictOnL4Route})
}

// egTCPAuthorizationLeak (seeds 1193, 2080): securitypolicy.go
// translateSecurityPolicyForRoute, TCPRoute branch, gives a SecurityPolicy
// P's authorization to every IR route of the TCP listeners P's route Y's
// parentRef reaches (whose rule name matches P's sectionName, when set),
// without checking the route is Y (the HTTP branch checks
// strings.HasPrefix(r.Name, prefix)). So Envoy Gateway's authorization on
// TCPRoute X through TCP listener L of Gateway G is P's value, where P
// names another TCPRoute Y, is valid on TCP (validateSecurityPolicyForTCP
// refuses HTTP-only fields: P sets authorization and nothing else), not
// beaten on Y (a target it loses elsewhere does not matter: Envoy Gateway
// settles conflicts target by target, seed 8949), and Y's parentRef
// admitted by L names G and L or no section.
// Ours may be X's own policy's value (seed 6185): the branch sets an
// authorization only while the IR route has none, so X's own policy, newer
// than P, is skipped.
// With mergeType, processSecurityPolicyForRoute merges P onto the policy of
// G's listener or of G first and validates the merge for TCP, then takes
// the same branch (for that listener): the parent policies must set
// authorization only too, and P's value wins the merge.
func egTCPAuthorizationLeak(c differential.Check, objs []*unstructured.Unstructured) bool {
	if c.Kind != gen.SP || c.Field != "/authorization/defaultAction" || c.Policy != "" || c.Theirs == "" ||
		c.Target.Kind != "TCPRoute" || len(c.Path) < 2 {
		return false
	}
	gw, listener := c.Path[0], c.Path[1].Section
	if listenerOf(objs, gw, listener)["protocol"] != "TCP" {
		return false
	}
	x := differential.Node{Kind: "TCPRoute", Namespace: c.Target.Namespace, Name: c.Target.Name}
	for _, p := range objs {
		if p.GetKind() != gen.SP || !onlyAuthorization(p, "mergeType") {
			continue
		}
		lost := lostTargets(objs, p)
		if _, merges := p.Object["spec"].(map[string]any)["mergeType"]; merges && !parentsOnlyAuthorization(objs, gw, listener) {
			continue
		}
		v, _, _ := unstructured.NestedFieldNoCopy(p.Object, "spec", "authorization", "defaultAction")
		if differential.Scalar(v) != c.Theirs {
			continue
		}
		for _, y := range targetRefs(p) {
			if y.Kind != "TCPRoute" || (y.Section != "" && y.Section != c.Target.Section) || nodeIn(lost, y) {
				continue
			}
			if whole := (differential.Node{Kind: y.Kind, Namespace: y.Namespace, Name: y.Name}); whole != x && reachesListener(objs, whole, gw, listener) {
				return true
			}
		}
	}
	return false
}

// onlyAuthorization: the SecurityPolicy sets authorization and nothing else
// (besides its targets and the fields also allowed).
func onlyAuthorization(p *unstructured.Unstructured, also ...string) bool {
	spec, _, _ := unstructured.NestedMap(p.Object, "spec")
	for k := range spec {
		if k != "targetRefs" && k != "authorization" && !slices.Contains(also, k) {
			return false
		}
	}
	_, ok := spec["authorization"]
	return ok
}

// parentsOnlyAuthorization: every SecurityPolicy naming Gateway gw or its
// listener (the policies a route policy with mergeType merges onto) sets
// authorization only, so that the merge is valid on TCP.
func parentsOnlyAuthorization(objs []*unstructured.Unstructured, gw differential.Node, listener string) bool {
	whole, section := differential.Node{Kind: "Gateway", Namespace: gw.Namespace, Name: gw.Name}, differential.Node{Kind: "Gateway", Namespace: gw.Namespace, Name: gw.Name, Section: listener}
	for _, q := range objs {
		if q.GetKind() == gen.SP && (names(q, whole) || names(q, section)) && !onlyAuthorization(q) {
			return false
		}
	}
	return true
}

// listenerOf is listener name of Gateway gw, nil when there is none.
func listenerOf(objs []*unstructured.Unstructured, gw differential.Node, name string) map[string]any {
	g := objectNamed(objs, "Gateway", gw.Namespace, gw.Name)
	if g == nil {
		return nil
	}
	ls, _, _ := unstructured.NestedSlice(g.Object, "spec", "listeners")
	for _, l := range ls {
		if m, ok := l.(map[string]any); ok && m["name"] == name {
			return m
		}
	}
	return nil
}

// reachesListener says whether route has a parentRef naming Gateway gw
// with section listener or none, that listener admitting route's namespace
// (the listeners of Envoy Gateway's parentRefCtx).
func reachesListener(objs []*unstructured.Unstructured, route, gw differential.Node, listener string) bool {
	r := objectNamed(objs, route.Kind, route.Namespace, route.Name)
	if r == nil {
		return false
	}
	from, _, _ := unstructured.NestedString(listenerOf(objs, gw, listener), "allowedRoutes", "namespaces", "from")
	if from != "All" && (from != "Same" || route.Namespace != gw.Namespace) {
		return false
	}
	refs, _, _ := unstructured.NestedSlice(r.Object, "spec", "parentRefs")
	for _, ref := range refs {
		m, _ := ref.(map[string]any)
		kind, _ := m["kind"].(string)
		ns, _ := m["namespace"].(string)
		name, _ := m["name"].(string)
		section, _ := m["sectionName"].(string)
		if ns == "" {
			ns = route.Namespace
		}
		if (kind == "" || kind == "Gateway") && ns == gw.Namespace && name == gw.Name && (section == "" || section == listener) {
			return true
		}
	}
	return false
}

// egStatusPerSection (seeds 1085, 6131, 2701, 6732): a policy naming a
// section of an object (a Gateway's listener, a route's rule) and also the
// object itself or another of its sections, or for a route's rule a parent
// Gateway of the route, beaten on that section by an older policy naming
// it, is Conflicted in Envoy Gateway on the ancestors of that section (the
// listener; the route's parent Gateways), while our outcome is one per
// policy and target object over all its contexts: in effect in some
// (PartiallyEnforced), or beaten in the inherited one by another policy
// (Overridden), so not Conflicted. Every ancestor Envoy Gateway reports
// Conflicted must be one of such a lost section.
func egStatusPerSection(c differential.Check, objs []*unstructured.Unstructured) bool {
	if c.Field != "Conflicted" || c.Theirs != "Conflicted" || c.Ours != "" || len(c.At) == 0 {
		return false
	}
	p := policyID(objs, c.Kind, c.Policy)
	if p == nil {
		return false
	}
	lost := lostTargets(objs, p)
	for _, a := range c.At {
		explained := false
		for _, t := range lost {
			explained = explained || (t.Section != "" && keepsObject(objs, p, lost, t) && ancestorOf(objs, a, t))
		}
		if !explained {
			return false
		}
	}
	return true
}

// keepsObject: policy p reaches t's object in another context without
// losing it there: it names the object elsewhere (whole, or another
// section), or, for a route's rule, a Gateway the route is attached to
// (whole, or a listener the route's parentRef reaches), whose policy the
// route inherits (seed 6732).
func keepsObject(objs []*unstructured.Unstructured, p *unstructured.Unstructured, lost []differential.Node, t differential.Node) bool {
	route := differential.Node{Kind: t.Kind, Namespace: t.Namespace, Name: t.Name}
	for _, u := range targetRefs(p) {
		if nodeIn(lost, u) {
			continue
		}
		if u.Kind == t.Kind && u.Namespace == t.Namespace && u.Name == t.Name {
			return true
		}
		if t.Kind == "Gateway" || u.Kind != "Gateway" {
			continue
		}
		gw := differential.Node{Kind: "Gateway", Namespace: u.Namespace, Name: u.Name}
		if u.Section == "" && reachesGateway(objs, route, gw) || u.Section != "" && reachesListener(objs, route, gw, u.Section) {
			return true
		}
	}
	return false
}

// ancestorOf: a is Envoy Gateway's ancestor of section t: the listener
// itself, or a Gateway the route names as parent.
func ancestorOf(objs []*unstructured.Unstructured, a, t differential.Node) bool {
	if a.Kind != "Gateway" {
		return false
	}
	if t.Kind == "Gateway" {
		return a == t
	}
	return reachesGateway(objs, differential.Node{Kind: t.Kind, Namespace: t.Namespace, Name: t.Name}, a)
}

// egEEPConflictOnL4Route (TCPRoute: seeds 1508, 20617; TLSRoute: 2118,
// 2128): two EnvoyExtensionPolicies naming one TCP, TLS or UDP route: Envoy
// Gateway settles the conflict for every route kind
// (envoyextensionpolicy.go resolveEnvoyExtensionPolicyRouteTargetRef) and
// reports the newer Conflicted, though an EnvoyExtensionPolicy does
// nothing on those routes (translateEnvoyExtensionPolicyForRoute reads
// HTTP listeners only); our profile does not attach it there at all
// (pkg/compute/semantics/envoygateway/reach.go), so lists no source. The
// policy must lose only such targets, and Envoy Gateway report the
// conflict only on Gateways those routes name as parents.
func egEEPConflictOnL4Route(c differential.Check, objs []*unstructured.Unstructured) bool {
	if c.Kind != gen.EEP || c.Field != "Conflicted" || c.Theirs != "Conflicted" || c.Ours != "" || len(c.At) == 0 {
		return false
	}
	p := policyID(objs, c.Kind, c.Policy)
	if p == nil {
		return false
	}
	lost := lostTargets(objs, p)
	if len(lost) == 0 {
		return false
	}
	for _, t := range lost {
		if t.Kind != "TCPRoute" && t.Kind != "TLSRoute" && t.Kind != "UDPRoute" {
			return false
		}
	}
	for _, a := range c.At {
		parent := false
		for _, t := range lost {
			parent = parent || (a.Kind == "Gateway" && reachesGateway(objs, t, a))
		}
		if !parent {
			return false
		}
	}
	return true
}

// reachesGateway says whether route has a parentRef naming Gateway gw.
func reachesGateway(objs []*unstructured.Unstructured, route, gw differential.Node) bool {
	r := objectNamed(objs, route.Kind, route.Namespace, route.Name)
	if r == nil {
		return false
	}
	refs, _, _ := unstructured.NestedSlice(r.Object, "spec", "parentRefs")
	for _, ref := range refs {
		m, _ := ref.(map[string]any)
		ns, _ := m["namespace"].(string)
		name, _ := m["name"].(string)
		if ns == "" {
			ns = route.Namespace
		}
		if ns == gw.Namespace && name == gw.Name {
			return true
		}
	}
	return false
}

func nodeIn(list []differential.Node, n differential.Node) bool {
	for _, m := range list {
		if m == n {
			return true
		}
	}
	return false
}

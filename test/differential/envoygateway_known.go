package differential

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// The disagreements with Envoy Gateway v1.9.0 docs/differential.md
// explains, each as narrow as its cause (github.com/envoyproxy/gateway
// v1.9.0 internal/gatewayapi).
const (
	ClassEGTCPAuthorization = "eg-bug-tcp-authorization-on-other-route"
	ClassEGStatusPerSection = "status-per-ancestor-section"
	ClassEGEEPOnTCPRoute    = "eep-conflict-on-tcproute"
)

func init() {
	RegisterKnown(KnownClass{Name: ClassEGTCPAuthorization, Impl: "envoygateway", Match: egTCPAuthorizationLeak})
	RegisterKnown(KnownClass{Name: ClassEGStatusPerSection, Impl: "envoygateway", Match: egStatusPerSection})
	RegisterKnown(KnownClass{Name: ClassEGEEPOnTCPRoute, Impl: "envoygateway", Match: egEEPConflictOnTCPRoute})
}

// egTCPAuthorizationLeak (seed 1193): securitypolicy.go
// translateSecurityPolicyForRoute, TCPRoute branch, gives a SecurityPolicy
// P's authorization to every IR route of the TCP listeners P's route Y's
// parentRef reaches (whose rule name matches P's sectionName, when set),
// without checking the route is Y (the HTTP branch checks
// strings.HasPrefix(r.Name, prefix)). So Envoy Gateway's authorization on
// TCPRoute X through TCP listener L of Gateway G is P's value, where P
// names another TCPRoute Y, valid on TCP (authorization and nothing else:
// validateSecurityPolicyForTCP refuses HTTP-only fields; no mergeType, whose
// merge this does not model), not beaten on Y, and Y's parentRef admitted by
// L names G and L or no section.
func egTCPAuthorizationLeak(c Check, objs []*unstructured.Unstructured) bool {
	if c.Kind != gen.SP || c.Field != "/authorization/defaultAction" || c.Policy != "" || c.Theirs == "" ||
		c.Target.Kind != "TCPRoute" || len(c.Path) < 2 {
		return false
	}
	gw, listener := c.Path[0], c.Path[1].Section
	if listenerOf(objs, gw, listener)["protocol"] != "TCP" {
		return false
	}
	x := Node{"TCPRoute", c.Target.Namespace, c.Target.Name, ""}
	for _, p := range objs {
		if p.GetKind() != gen.SP || !onlyAuthorization(p) || len(lostTargets(objs, p)) > 0 {
			continue
		}
		v, _, _ := unstructured.NestedFieldNoCopy(p.Object, "spec", "authorization", "defaultAction")
		if str(v) != c.Theirs {
			continue
		}
		for _, y := range targetRefs(p) {
			if y.Kind != "TCPRoute" || (y.Section != "" && y.Section != c.Target.Section) {
				continue
			}
			if whole := (Node{y.Kind, y.Namespace, y.Name, ""}); whole != x && reachesListener(objs, whole, gw, listener) {
				return true
			}
		}
	}
	return false
}

// onlyAuthorization: the SecurityPolicy sets authorization and nothing else.
func onlyAuthorization(p *unstructured.Unstructured) bool {
	spec, _, _ := unstructured.NestedMap(p.Object, "spec")
	for k := range spec {
		if k != "targetRefs" && k != "authorization" {
			return false
		}
	}
	_, ok := spec["authorization"]
	return ok
}

// listenerOf is listener name of Gateway gw, nil when there is none.
func listenerOf(objs []*unstructured.Unstructured, gw Node, name string) map[string]any {
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
func reachesListener(objs []*unstructured.Unstructured, route, gw Node, listener string) bool {
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

// egStatusPerSection (seed 1085): a policy naming a Gateway and one of its
// listeners, beaten on that listener by an older policy naming it, is
// Conflicted in Envoy Gateway on that ancestor section only (its status is
// per ancestor), while our outcome is one per policy and target over all
// its contexts, and is not Conflicted there. Every ancestor Envoy Gateway
// reports Conflicted must be such a section.
func egStatusPerSection(c Check, objs []*unstructured.Unstructured) bool {
	if c.Field != "Conflicted" || c.Theirs != "Conflicted" || c.Ours != "" || len(c.At) == 0 {
		return false
	}
	p := policyID(objs, c.Kind, c.Policy)
	if p == nil {
		return false
	}
	for _, a := range c.At {
		section := Node{"Gateway", a.Namespace, a.Name, a.Section}
		whole := Node{"Gateway", a.Namespace, a.Name, ""}
		if a.Kind != "Gateway" || a.Section == "" || !names(p, whole) || !names(p, section) ||
			!nodeIn(lostTargets(objs, p), section) {
			return false
		}
	}
	return true
}

// egEEPConflictOnTCPRoute (seeds 1508, 20617): two EnvoyExtensionPolicies
// naming one TCPRoute: Envoy Gateway settles the conflict
// (envoyextensionpolicy.go resolveEnvoyExtensionPolicyRouteTargetRef,
// for every route kind) and reports the newer Conflicted, though an
// EnvoyExtensionPolicy does nothing on a TCP route; we list no source
// there. The policy must lose only TCPRoute targets, and Envoy Gateway
// report the conflict only on Gateways those routes name as parents.
func egEEPConflictOnTCPRoute(c Check, objs []*unstructured.Unstructured) bool {
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
		if t.Kind != "TCPRoute" {
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
func reachesGateway(objs []*unstructured.Unstructured, route, gw Node) bool {
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

func nodeIn(list []Node, n Node) bool {
	for _, m := range list {
		if m == n {
			return true
		}
	}
	return false
}

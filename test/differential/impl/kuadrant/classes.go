package kuadrant

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/oracles/kuadrant/agree"
)

// RulesCovered names the known class of Kuadrant disagreements
// docs/differential.md describes: a policy (on a route, or on a Gateway or
// listener a route's parentRef names) overridden on every path, because
// every rule of such a route is named by a policy of the same kind with a
// sectionName that replaces its entries. Kuadrant has a path per rule
// only, so the policy is Overridden; the engine also keeps the route's own
// context (the route without section), which no rule falls into, and
// reports the policy in effect there. Every path's entries agree; only the
// standing differs.
const RulesCovered = "overridden on every rule, in effect in the whole-route context"

func init() {
	differential.RegisterKnown(differential.KnownClass{Name: RulesCovered, Impl: "kuadrant", Match: func(c differential.Check, objs []*unstructured.Unstructured) bool {
		return Class(objs, c) == RulesCovered
	}})
}

// Class returns the known class of a Kuadrant disagreement, or "".
func Class(objs []*unstructured.Unstructured, c differential.Check) string {
	if c.Field != "standing" || c.Theirs != string(agree.Overridden) || c.Ours != string(agree.InEffect) {
		return ""
	}
	var p *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == c.Kind && o.GetNamespace()+"/"+o.GetName() == c.Policy {
			p = o
		}
	}
	if p == nil {
		return ""
	}
	ref, _, _ := unstructured.NestedStringMap(p.Object, "spec", "targetRef")
	for _, r := range objs {
		if isRouteKind(r.GetKind()) && routeUnder(r, p.GetNamespace(), ref) && rulesCovered(objs, c.Kind, r) {
			return RulesCovered
		}
	}
	return ""
}

// routeUnder says whether route r is the target ref (in namespace ns) or
// has a parentRef to it, when it is a Gateway.
func routeUnder(r *unstructured.Unstructured, ns string, ref map[string]string) bool {
	if isRouteKind(ref["kind"]) {
		return r.GetKind() == ref["kind"] && r.GetNamespace() == ns && r.GetName() == ref["name"]
	}
	refs, _, _ := unstructured.NestedSlice(r.Object, "spec", "parentRefs")
	for _, x := range refs {
		pr, _ := x.(map[string]any)
		gwNS, _ := pr["namespace"].(string)
		if gwNS == "" {
			gwNS = r.GetNamespace()
		}
		if gwNS == ns && pr["name"] == ref["name"] {
			return true
		}
	}
	return false
}

// rulesCovered says whether every rule of route r is named by a policy of
// kind with its sectionName.
func rulesCovered(objs []*unstructured.Unstructured, kind string, r *unstructured.Unstructured) bool {
	covered := map[string]bool{}
	for _, o := range objs {
		t, _, _ := unstructured.NestedStringMap(o.Object, "spec", "targetRef")
		if o.GetKind() == kind && o.GetNamespace() == r.GetNamespace() && t["kind"] == r.GetKind() && t["name"] == r.GetName() {
			covered[t["sectionName"]] = true
		}
	}
	rules, _, _ := unstructured.NestedSlice(r.Object, "spec", "rules")
	for _, x := range rules {
		m, _ := x.(map[string]any)
		if name, _ := m["name"].(string); name == "" || !covered[name] {
			return false
		}
	}
	return len(rules) > 0
}

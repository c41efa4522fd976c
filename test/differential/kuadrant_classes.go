package differential

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/oracles/kuadrant/agree"
)

// KuadrantRulesCovered names the known class of Kuadrant disagreements
// docs/differential.md describes: a policy on a whole route every rule of
// which is named by a policy of the same kind with a sectionName. Kuadrant
// has a path per rule only, where the rule's policy beats the route's, so
// the route policy is Overridden; the engine also keeps the route's own
// context (the route without section) and reports the route policy in
// effect there. Every path's entries agree; only the standing differs.
const KuadrantRulesCovered = "route policy under a policy on every rule"

// KuadrantClass returns the known class of a Kuadrant disagreement, or "".
func KuadrantClass(objs []*unstructured.Unstructured, c Check) string {
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
	if !isRouteKind(ref["kind"]) || ref["sectionName"] != "" {
		return ""
	}
	route := findObject(objs, ref["kind"], p.GetNamespace(), ref["name"])
	if route == nil {
		return ""
	}
	covered := map[string]bool{}
	for _, o := range objs {
		r, _, _ := unstructured.NestedStringMap(o.Object, "spec", "targetRef")
		if o.GetKind() == c.Kind && o.GetNamespace() == p.GetNamespace() && r["kind"] == ref["kind"] && r["name"] == ref["name"] {
			covered[r["sectionName"]] = true
		}
	}
	rules, _, _ := unstructured.NestedSlice(route.Object, "spec", "rules")
	for _, x := range rules {
		m, _ := x.(map[string]any)
		if name, _ := m["name"].(string); name == "" || !covered[name] {
			return ""
		}
	}
	return KuadrantRulesCovered
}

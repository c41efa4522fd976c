package kuadrant

import (
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/oracles/kuadrant/agree"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/oracles/kuadrant/kuadrantoracle"
)

// kuadrantStanding checks every policy's standing (agree.Verdict): ours
// from the engine's outcomes on route targets (agree.OurVerdicts), theirs
// from Kuadrant's effective policies on the attached paths: in effect when
// an entry of it is on one, overridden when its target is on one but none
// of its entries, reaching no route otherwise; Kuadrant's Accepted
// condition when it is not accepted (target not found). Kuadrant's own
// Enforced condition is not read: it counts paths through listeners that
// do not admit the route (it skips only hostname mismatches, and a
// TokenRateLimitPolicy not even those). A policy on a route attached to no
// listener is not checked: the engine keeps such a route's own context,
// where Kuadrant has no path (docs/differential.md). A DNSPolicy's or
// TLSPolicy's standing is its Accepted condition (accepted, Conflicted,
// TargetNotFound, Invalid) against our outcomes over its targets
// (agree.DirectStanding).
func kuadrantStanding(objs []*unstructured.Unstructured, res *kuadrantoracle.Result, paths []kuadrantoracle.Path,
	outs map[compute.Key]runtime.Object) []differential.Check {
	var keys []string
	policies := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		if o.GroupVersionKind().Group == gen.KuadrantGroup {
			k := o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
			keys = append(keys, k)
			policies[k] = o
		}
	}
	accepted := agree.OracleVerdicts(res)
	mine := agree.OurVerdicts(outs, keys)
	sort.Strings(keys)
	var checks []differential.Check
	for _, k := range keys {
		p := policies[k]
		kind, policy, _ := strings.Cut(k, " ")
		if directKinds[kind] {
			theirs, ours := agree.DirectStanding(res, p, accepted[k], mine[k])
			checks = append(checks, differential.Check{Kind: kind, Subject: k, Field: "standing",
				Theirs: string(theirs), Ours: string(ours), Policy: policy})
			continue
		}
		ref, _, _ := unstructured.NestedStringMap(p.Object, "spec", "targetRef")
		if isRouteKind(ref["kind"]) && !routeAttached(objs, p.GetKind(), p.GetNamespace(), ref["name"]) {
			continue
		}
		theirs := pathStanding(p, ref, paths)
		switch v := accepted[k]; v {
		case agree.InEffect, agree.Overridden, agree.NoRoutes:
		default:
			theirs = v
		}
		checks = append(checks, differential.Check{Kind: kind, Subject: k, Field: "standing",
			Theirs: string(theirs), Ours: string(mine[k]), Policy: policy})
	}
	return checks
}

func pathStanding(p *unstructured.Unstructured, ref map[string]string, paths []kuadrantoracle.Path) agree.Verdict {
	id := p.GetNamespace() + "/" + p.GetName()
	onPath := false
	for _, path := range paths {
		if path.Kind != p.GetKind() || !targetOn(path.Path, p.GetNamespace(), ref) {
			continue
		}
		onPath = true
		for _, r := range path.Rules {
			if kuadrantoracle.SourceName(r.Source) == id {
				return agree.InEffect
			}
		}
	}
	if onPath {
		return agree.Overridden
	}
	return agree.NoRoutes
}

// targetOn says whether a policy's targetRef (in namespace ns) names a node of path.
func targetOn(path []kuadrantoracle.Node, ns string, ref map[string]string) bool {
	kind := ref["kind"]
	if s := ref["sectionName"]; s != "" {
		switch kind {
		case "Gateway":
			kind = "Listener"
		default:
			kind += "Rule"
		}
	}
	for _, n := range path {
		if n.Kind == kind && n.Namespace == ns && n.Name == ref["name"] && n.SectionName == ref["sectionName"] {
			return true
		}
	}
	return false
}

func isRouteKind(kind string) bool { return kind == "HTTPRoute" || kind == "GRPCRoute" }

// routeAttached says whether route (kind HTTPRoute, or GRPCRoute when the
// policy kind reaches it) attaches through some listener its parentRefs
// select.
func routeAttached(objs []*unstructured.Unstructured, policyKind, ns, name string) bool {
	for _, kind := range []string{"HTTPRoute", "GRPCRoute"} {
		r := findObject(objs, kind, ns, name)
		if r == nil {
			continue
		}
		refs, _, _ := unstructured.NestedSlice(r.Object, "spec", "parentRefs")
		for _, x := range refs {
			pr, _ := x.(map[string]any)
			if k, _ := pr["kind"].(string); k != "" && k != "Gateway" {
				continue
			}
			gwNS, _ := pr["namespace"].(string)
			if gwNS == "" {
				gwNS = ns
			}
			gwName, _ := pr["name"].(string)
			section, _ := pr["sectionName"].(string)
			g := findObject(objs, "Gateway", gwNS, gwName)
			if g == nil {
				continue
			}
			ls, _, _ := unstructured.NestedSlice(g.Object, "spec", "listeners")
			for _, l := range ls {
				lm, _ := l.(map[string]any)
				ln, _ := lm["name"].(string)
				if section != "" && ln != section {
					continue
				}
				path := []kuadrantoracle.Node{{Kind: "Gateway", Namespace: gwNS, Name: gwName},
					{Kind: "Listener", Namespace: gwNS, Name: gwName, SectionName: ln}, {Kind: kind, Namespace: ns, Name: name}}
				if kuadrantAttached(objs, path) {
					return true
				}
			}
		}
	}
	return false
}

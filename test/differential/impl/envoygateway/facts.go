package envoygateway

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
)

// The objects' facts the predicates read.

// targetRefs are the targets policy p names, in its namespace.
func targetRefs(p *unstructured.Unstructured) []differential.Node {
	refs, _, _ := unstructured.NestedSlice(p.Object, "spec", "targetRefs")
	var out []differential.Node
	for _, r := range refs {
		m, _ := r.(map[string]any)
		k, _ := m["kind"].(string)
		n, _ := m["name"].(string)
		s, _ := m["sectionName"].(string)
		out = append(out, differential.Node{Kind: k, Namespace: p.GetNamespace(), Name: n, Section: s})
	}
	return out
}

// objectNamed is the object of kind at namespace/name, or nil.
func objectNamed(objs []*unstructured.Unstructured, kind, ns, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetNamespace() == ns && o.GetName() == name {
			return o
		}
	}
	return nil
}

// policyID finds the policy of kind named "namespace/name".
func policyID(objs []*unstructured.Unstructured, kind, id string) *unstructured.Unstructured {
	ns, name, _ := strings.Cut(id, "/")
	return objectNamed(objs, kind, ns, name)
}

// older orders policies as Envoy Gateway does ((*Resources).Sort): by
// creationTimestamp, then namespace/name.
func older(a, b *unstructured.Unstructured) bool {
	ta, tb := a.GetCreationTimestamp().Time, b.GetCreationTimestamp().Time
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	return a.GetNamespace()+"/"+a.GetName() < b.GetNamespace()+"/"+b.GetName()
}

// lostTargets are the targets of p that an older policy of its kind names
// too (with the same section, or both without): the ones p loses.
func lostTargets(objs []*unstructured.Unstructured, p *unstructured.Unstructured) []differential.Node {
	var out []differential.Node
	for _, t := range targetRefs(p) {
		for _, q := range objs {
			if q.GetKind() == p.GetKind() && q != p && older(q, p) && names(q, t) {
				out = append(out, t)
				break
			}
		}
	}
	return out
}

// names says whether policy p names target t.
func names(p *unstructured.Unstructured, t differential.Node) bool {
	for _, r := range targetRefs(p) {
		if r == t {
			return true
		}
	}
	return false
}

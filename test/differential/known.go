package differential

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A KnownClass is a kind of disagreement docs/differential.md explains (a
// bug of the implementation, a difference of granularity that is not one
// of effect), recognized from what the case's objects and both answers
// show. Its Match must be narrow: a disagreement of another kind that it
// swallowed would never be looked at, so each predicate demands every fact
// the documented cause needs and is tested on its real seed and on near
// misses it must refuse.
type KnownClass struct {
	Name string
	Impl string // the oracle whose disagreements it explains
	// Match says whether the disagreeing check c, of the case made of
	// objs, is of this class.
	Match func(c Check, objs []*unstructured.Unstructured) bool
}

var knownClasses []KnownClass

// RegisterKnown adds a class; each oracle's file registers its own.
func RegisterKnown(k KnownClass) { knownClasses = append(knownClasses, k) }

// Classify names the known class of impl's disagreeing check c, if any.
func Classify(impl string, c Check, objs []*unstructured.Unstructured) (string, bool) {
	if c.Agree() {
		return "", false
	}
	for _, k := range knownClasses {
		if k.Impl == impl && k.Match(c, objs) {
			return k.Name, true
		}
	}
	return "", false
}

// Explained sorts the outcome's disagreements into the known classes (the
// number of checks of each) and the unexplained ones.
func (r Outcome) Explained() (known map[string]int, unexplained []Check) {
	d := r.Disagreements()
	if len(d) == 0 {
		return nil, nil
	}
	objs := r.Case.Objects()
	known = map[string]int{}
	for _, c := range d {
		if name, ok := Classify(r.Impl, c, objs); ok {
			known[name]++
		} else {
			unexplained = append(unexplained, c)
		}
	}
	return known, unexplained
}

// CaseClass is how a case ends: "agree", "known: <class>[, <class>]" when
// every disagreement is of a known class, or "unexplained".
func CaseClass(r Outcome) string {
	known, unexplained := r.Explained()
	switch {
	case len(unexplained) > 0:
		return "unexplained"
	case len(known) == 0:
		return "agree"
	}
	return "known: " + strings.Join(sortedKeys(known), ", ")
}

// FormatClasses prints the counts of t's case classes: agree first, then
// the known classes by name, then unexplained (always, even at zero).
func FormatClasses(t Tally) string {
	parts := []string{fmt.Sprintf("agree %d", t.CasesAgreeing)}
	var names []string
	for k := range t.Classes {
		if strings.HasPrefix(k, "known: ") {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		parts = append(parts, fmt.Sprintf("%s %d", k, t.Classes[k]))
	}
	return strings.Join(append(parts, fmt.Sprintf("unexplained %d", t.Classes["unexplained"])), ", ")
}

// The objects' facts the predicates read.

// targetRefs are the targets policy p names, in its namespace.
func targetRefs(p *unstructured.Unstructured) []Node {
	refs, _, _ := unstructured.NestedSlice(p.Object, "spec", "targetRefs")
	var out []Node
	for _, r := range refs {
		m, _ := r.(map[string]any)
		k, _ := m["kind"].(string)
		n, _ := m["name"].(string)
		s, _ := m["sectionName"].(string)
		out = append(out, Node{k, p.GetNamespace(), n, s})
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
func lostTargets(objs []*unstructured.Unstructured, p *unstructured.Unstructured) []Node {
	var out []Node
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
func names(p *unstructured.Unstructured, t Node) bool {
	for _, r := range targetRefs(p) {
		if r == t {
			return true
		}
	}
	return false
}

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

// RegisterKnown adds a class; each oracle's package registers its own in
// init.
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

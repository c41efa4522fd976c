package differential

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ShrinkBudget bounds the judgements one shrink makes.
var ShrinkBudget = 400

// Shrink drops objects, then list items and object fields, one at a time,
// keeping each drop after which both sides still disagree on a check like
// want (disagreesLike); it returns the smallest objects
// found and their checks. A drop that makes either side fail (an invalid
// object) is undone.
func Shrink(o Oracle, objs []*unstructured.Unstructured, want Check) ([]*unstructured.Unstructured, []Check) {
	return ShrinkToward(o, objs, want, "")
}

// ShrinkToward is Shrink keeping, when class is not "", candidates whose
// disagreements are all of that known class and one of them like want: a
// known class's regression case (WriteKnownCase) is shrunk to its class.
func ShrinkToward(o Oracle, objs []*unstructured.Unstructured, want Check, class string) ([]*unstructured.Unstructured, []Check) {
	cur := objs
	curChecks, _ := Judge(o, cur)
	budget := ShrinkBudget
	try := func(cand []*unstructured.Unstructured) bool {
		if budget <= 0 {
			return false
		}
		budget--
		checks, err := Judge(o, cand)
		if err != nil || !disagreesLike(o.Name(), checks, cand, want, class) {
			return false
		}
		cur, curChecks = cand, checks
		return true
	}
	for changed := true; changed && budget > 0; {
		changed = false
		for i := len(cur) - 1; i >= 0; i-- {
			if i < len(cur) && try(without(cur, i)) {
				changed = true
			}
		}
		for i := 0; i < len(cur); i++ {
			// A known class's case is applied to a real cluster, and not every
			// oracle validates the Gateway API objects as kube-apiserver does
			// (a listener without a name): its topology is dropped whole or kept.
			if class != "" && !isPolicy(cur[i]) {
				continue
			}
			for _, cand := range fieldDrops(cur, i) {
				if try(cand) {
					changed = true
					break
				}
			}
		}
	}
	return cur, curChecks
}

// disagreesLike: some check of checks disagrees as want does: the same
// policy kind and field, each side set or unset as in want (a shrink must
// not turn "they say Conflicted, we do not" into its opposite), and in no
// known class (a shrink must not land on a disagreement already explained).
// With class set it is the other way round: that check must be of class,
// and so must every other disagreement (a known class's case shows that
// class and nothing else).
func disagreesLike(impl string, checks []Check, objs []*unstructured.Unstructured, want Check, class string) bool {
	like := false
	for _, c := range checks {
		if c.Agree() {
			continue
		}
		got, _ := Classify(impl, c, objs)
		if class != "" && got != class {
			return false
		}
		if c.Kind != want.Kind || c.Field != want.Field ||
			(c.Theirs == "") != (want.Theirs == "") || (c.Ours == "") != (want.Ours == "") {
			continue
		}
		if got == class {
			like = true
		}
	}
	return like
}

func without(objs []*unstructured.Unstructured, i int) []*unstructured.Unstructured {
	out := append([]*unstructured.Unstructured(nil), objs[:i]...)
	return append(out, objs[i+1:]...)
}

// fieldDrops are the copies of objs with one list item or one map key of
// object i's spec dropped (at any depth).
func fieldDrops(objs []*unstructured.Unstructured, i int) [][]*unstructured.Unstructured {
	spec, ok := objs[i].Object["spec"].(map[string]any)
	if !ok {
		return nil
	}
	var out [][]*unstructured.Unstructured
	for _, s := range drops(spec) {
		c := objs[i].DeepCopy()
		c.Object["spec"] = s
		cand := append([]*unstructured.Unstructured(nil), objs...)
		cand[i] = c
		out = append(out, cand)
	}
	return out
}

// drops returns copies of v with one key or item dropped somewhere inside.
func drops(v any) []map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	var out []map[string]any
	for _, k := range sortedKeys(m) {
		c := copyMap(m)
		delete(c, k)
		out = append(out, c)
		for _, inner := range dropsIn(m[k]) {
			c := copyMap(m)
			c[k] = inner
			out = append(out, c)
		}
	}
	return out
}

func dropsIn(v any) []any {
	switch x := v.(type) {
	case map[string]any:
		var out []any
		for _, d := range drops(x) {
			out = append(out, d)
		}
		return out
	case []any:
		var out []any
		for j := range x {
			if len(x) > 1 {
				c := append(append([]any(nil), x[:j]...), x[j+1:]...)
				out = append(out, c)
			}
			for _, inner := range dropsIn(x[j]) {
				c := append([]any(nil), x...)
				c[j] = inner
				out = append(out, c)
			}
		}
		return out
	}
	return nil
}

func copyMap(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

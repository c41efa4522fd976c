package render

import (
	"strconv"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/tree"
)

// ordered adds the effective spec of a kind whose policies all apply (docs/spec.md §4.1): a list
// whose item i is the spec of the i-th policy in the implementation's order, fieldSources naming
// "/<i>". Each item is shown as a numbered step with its policy, its fields below it.
func ordered(n *tree.Node, items []any, sources map[string]string) {
	for i, item := range items {
		ptr := "/" + strconv.Itoa(i)
		step := n.Add(tree.P(strconv.Itoa(i+1)+". applied "+ordinal(i+1)), tree.S(tree.Source, "  ← "+sources[ptr]))
		if m, ok := item.(map[string]any); ok && len(m) > 0 {
			fields(step, m, ptr, nil)
			continue
		}
		step.Add(leaf("spec", item, "")...)
	}
}

// isOrdered reports whether a spec is such a list: fieldSources name each of its items and
// nothing else.
func isOrdered(v any, sources map[string]string) ([]any, bool) {
	items, ok := v.([]any)
	if !ok || len(items) == 0 || len(sources) != len(items) {
		return nil, false
	}
	for i := range items {
		if _, named := sources["/"+strconv.Itoa(i)]; !named {
			return nil, false
		}
	}
	return items, true
}

func ordinal(i int) string {
	suffix := "th"
	switch {
	case i%100 >= 11 && i%100 <= 13:
	case i%10 == 1:
		suffix = "st"
	case i%10 == 2:
		suffix = "nd"
	case i%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(i) + suffix
}

// orderedLeaves are the leaves a review compares of such a list: per policy, its step and its
// spec, keyed by the policy rather than by position, so that a policy added first shows as
// added and the others as moved one step, not as every item changed.
func orderedLeaves(items []any, sources map[string]string) []leafValue {
	out := make([]leafValue, 0, 2*len(items))
	for i, item := range items {
		src := sources["/"+strconv.Itoa(i)]
		out = append(out,
			leafValue{ptr: "policy\x00" + src + "\x00step", path: []string{src, "step"}, value: i + 1},
			leafValue{ptr: "policy\x00" + src + "\x00spec", path: []string{src, "spec"}, value: item})
	}
	return out
}

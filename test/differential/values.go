package differential

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// EffectiveSpec is our effective spec of one kind in one context (Spec)
// with the policy each leaf came from (Sources, by JSON pointer), as
// Ours.Effective returns them.
type EffectiveSpec struct {
	Spec    map[string]any
	Sources map[string]string
}

// Value is the leaf at pointer as a comparable string: a scalar as text (a
// duration normalized), a list as the policies its items came from, in
// order ("src:ns/name,..."), "" when unset.
func (e EffectiveSpec) Value(pointer string) string {
	if e.Spec == nil {
		return ""
	}
	var cur any = e.Spec
	for _, p := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[p]
	}
	switch v := cur.(type) {
	case nil:
		return ""
	case []any:
		return listSources(e.Sources, pointer, len(v))
	default:
		return Scalar(v)
	}
}

// listSources names the policy of each item of the list at pointer: the
// list's own source when it is one leaf, else each item's.
func listSources(sources map[string]string, pointer string, n int) string {
	if s, ok := sources[pointer]; ok {
		return "src:" + strings.TrimSuffix(strings.Repeat(s+",", n), ",")
	}
	var items []string
	for i := 0; i < n; i++ {
		prefix := fmt.Sprintf("%s/%d", pointer, i)
		src := ""
		for _, k := range sortedKeys(sources) {
			if k == prefix || strings.HasPrefix(k, prefix+"/") {
				src = sources[k]
				break
			}
		}
		items = append(items, src)
	}
	return "src:" + strings.Join(items, ",")
}

// Scalar is a scalar as text: a duration normalized, a number without exponent.
func Scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		if d, err := time.ParseDuration(x); err == nil {
			return d.String()
		}
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return fmt.Sprint(v)
}

// Duration normalizes a duration an implementation's output writes as text
// ("100s" and "1m40s" compare equal); "" when unset, "invalid:<text>" when
// it is no duration.
func Duration(v any) string {
	s, ok := v.(string)
	if !ok || s == "" {
		return ""
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return "invalid:" + s
	}
	return d.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

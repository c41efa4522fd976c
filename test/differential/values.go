package differential

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// effective is our effective spec of one kind in one context, with the
// policy each leaf came from.
type effective struct {
	spec    map[string]any
	sources map[string]string
}

// value is the leaf at pointer as a comparable string: a scalar as text (a
// duration normalized), a list as the policies its items came from, in
// order ("src:ns/name,..."), "" when unset.
func (e effective) value(pointer string) string {
	if e.spec == nil {
		return ""
	}
	var cur any = e.spec
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
		return listSources(e.sources, pointer, len(v))
	default:
		return str(v)
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

// dig walks nested objects of a decoded JSON document.
func dig(m map[string]any, keys ...string) any {
	var cur any = m
	for _, k := range keys {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}

// str is a scalar as text: a duration normalized, a number without exponent.
func str(v any) string {
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

// lbType reads the IR's load balancer, one of whose fields is set, as the
// policy's type.
func lbType(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	names := map[string]string{"random": "Random", "roundRobin": "RoundRobin", "leastRequest": "LeastRequest",
		"consistentHash": "ConsistentHash", "maglev": "Maglev"}
	var found []string
	for k := range m {
		if n, ok := names[k]; ok {
			found = append(found, n)
		}
	}
	sort.Strings(found)
	return strings.Join(found, ",")
}

var extProcName = regexp.MustCompile(`^envoyextensionpolicy/([^/]+)/([^/]+)/extproc/\d+$`)

// extProcSources names the policy of each of the IR's external processors,
// from their names (envoyextensionpolicy/<ns>/<name>/extproc/<i>).
func extProcSources(v any) string {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return ""
	}
	var items []string
	for _, it := range list {
		name, _ := dig(map[string]any{"x": it}, "x", "name").(string)
		if m := extProcName.FindStringSubmatch(name); m != nil {
			items = append(items, m[1]+"/"+m[2])
		} else {
			items = append(items, "?"+name)
		}
	}
	return "src:" + strings.Join(items, ",")
}

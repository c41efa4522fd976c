package envoygateway

import (
	"regexp"
	"sort"
	"strings"
)

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

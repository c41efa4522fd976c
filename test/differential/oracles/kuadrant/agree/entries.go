package agree

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// topLevelPredicates is the rule ID Kuadrant gives a RateLimitPolicy's or TokenRateLimitPolicy's
// top-level `when` (api/v1 ratelimitpolicy_types.go RulesKeyTopLevelPredicates).
const topLevelPredicates = "###_TOP_LEVEL_PREDICATES_###"

// OurEntries reads an engine entry's spec as Kuadrant's named entries (rule IDs as
// MergeablePolicy.Rules() names them), each with the policy its fields came from. Entries are
// found in the spec, so one without leaves is still listed; a field that belongs to no entry, or
// an entry whose fields come from two policies, is an error (Kuadrant never merges inside one).
func OurEntries(kind string, e v1alpha1.EffectiveSpec) (Entries, error) {
	var spec map[string]any
	if len(e.Spec.Raw) > 0 {
		if err := json.Unmarshal(e.Spec.Raw, &spec); err != nil {
			return nil, fmt.Errorf("spec: %w", err)
		}
	}
	prefixes := map[string]string{} // JSON pointer of an entry -> rule ID
	if kind == "AuthPolicy" {
		authEntries(spec, prefixes)
	} else {
		for name := range asMap(spec["limits"]) {
			prefixes["/limits/"+escape(name)] = name
		}
		if _, ok := spec["when"]; ok {
			prefixes["/when"] = topLevelPredicates
		}
	}
	out := Entries{}
	for id := range prefixes {
		out[prefixes[id]] = ""
	}
	for ptr, src := range e.FieldSources {
		id, ok := entryOf(ptr, prefixes)
		if !ok {
			return nil, fmt.Errorf("field %s belongs to no named entry", ptr)
		}
		if cur := out[id]; cur != "" && cur != src {
			return nil, fmt.Errorf("entry %s has fields from %s and %s", id, cur, src)
		}
		out[id] = src
	}
	return out, nil
}

func authEntries(spec map[string]any, prefixes map[string]string) {
	for name := range asMap(spec["patterns"]) {
		prefixes["/patterns/"+escape(name)] = "patterns#" + name
	}
	if _, ok := spec["when"]; ok {
		prefixes["/when"] = "conditions#"
	}
	rules := asMap(spec["rules"])
	for _, section := range []string{"authentication", "metadata", "authorization", "callbacks"} {
		for name := range asMap(rules[section]) {
			prefixes["/rules/"+section+"/"+escape(name)] = section + "#" + name
		}
	}
	response := asMap(rules["response"])
	for _, deny := range []string{"unauthenticated", "unauthorized"} {
		if _, ok := response[deny]; ok {
			prefixes["/rules/response/"+deny] = "response." + deny + "#"
		}
	}
	success := asMap(response["success"])
	for name := range asMap(success["headers"]) {
		prefixes["/rules/response/success/headers/"+escape(name)] = "response.success.headers#" + name
	}
	for name := range asMap(success["filters"]) {
		prefixes["/rules/response/success/filters/"+escape(name)] = "response.success.metadata#" + name
	}
}

func entryOf(ptr string, prefixes map[string]string) (string, bool) {
	for p, id := range prefixes {
		if ptr == p || strings.HasPrefix(ptr, p+"/") {
			return id, true
		}
	}
	return "", false
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// escape encodes a name as one JSON pointer token (RFC 6901).
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

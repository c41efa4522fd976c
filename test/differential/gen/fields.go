package gen

import (
	"fmt"
	"strings"
)

// Field is one spec field the generator sets and the oracles compare: its
// JSON pointer in the policy's spec and how policy k sets it.
type Field struct {
	Pointer string
	Set     func(spec map[string]any, k int)
}

// Fields are the compared fields of each kind. Durations are k seconds (k
// is the policy's index), so a duration names its policy.
var Fields = map[string][]Field{
	BTP: {
		{"/timeout/tcp/connectTimeout", duration("/timeout/tcp/connectTimeout")},
		{"/timeout/http/connectionIdleTimeout", duration("/timeout/http/connectionIdleTimeout")},
		{"/loadBalancer/type", func(spec map[string]any, k int) {
			put(spec, "/loadBalancer/type", []string{"Random", "RoundRobin", "LeastRequest"}[k%3])
		}},
	},
	SP: {
		{"/cors/maxAge", duration("/cors/maxAge")},
		{"/authorization/defaultAction", func(spec map[string]any, k int) {
			put(spec, "/authorization/defaultAction", []string{"Allow", "Deny"}[k%2])
		}},
	},
	CTP: {
		{"/timeout/http/idleTimeout", duration("/timeout/http/idleTimeout")},
	},
	EEP: {
		{"/extProc", func(spec map[string]any, k int) {
			spec["extProc"] = []any{map[string]any{
				"backendRefs":    []any{map[string]any{"name": "extproc", "port": int64(9000)}},
				"messageTimeout": fmt.Sprintf("%ds", k),
			}}
		}},
	},
}

func duration(pointer string) func(map[string]any, int) {
	return func(spec map[string]any, k int) { put(spec, pointer, fmt.Sprintf("%ds", k)) }
}

// put sets the value at a JSON pointer of plain object keys, creating the objects on the way.
func put(m map[string]any, pointer string, v any) {
	parts := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
}

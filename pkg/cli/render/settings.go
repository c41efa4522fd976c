package render

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/jsonpointer"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/tree"
)

// settings adds the merged spec under n as a tree of fields, each leaf
// with the policy that set it (fieldSources: JSON pointer -> policy). A
// leaf is what fieldSources names: a scalar, a list or an empty object;
// a list is opened only when fieldSources names pointers inside it (a
// merge by list-map keys).
func settings(n *tree.Node, raw []byte, sources map[string]string) {
	if len(raw) == 0 || string(raw) == "null" {
		n.Add(tree.S(tree.Muted, "no settings"))
		return
	}
	v, err := decodeSpec(raw)
	if err != nil {
		n.Add(tree.S(tree.Bad, "unreadable spec: "+err.Error()))
		return
	}
	if m, ok := v.(map[string]any); ok && len(m) > 0 {
		fields(n, v, "", sources)
		return
	}
	if items, ok := isOrdered(v, sources); ok {
		ordered(n, items, sources)
		return
	}
	n.Add(leaf("spec", v, sources[""])...)
}

// decodeSpec decodes a merged spec, its numbers as written (not as float64).
func decodeSpec(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// fields adds the members of an object or the items of a list.
func fields(n *tree.Node, v any, ptr string, sources map[string]string) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			member(n, k, v[k], ptr+"/"+jsonpointer.Escape(k), sources)
		}
	case []any:
		for i, item := range v {
			member(n, "["+strconv.Itoa(i)+"]", item, ptr+"/"+strconv.Itoa(i), sources)
		}
	}
}

func member(n *tree.Node, name string, v any, ptr string, sources map[string]string) {
	if isLeaf(v, ptr, sources) {
		n.Add(leaf(name, v, sources[ptr])...)
		return
	}
	fields(n.Add(tree.P(name)), v, ptr, sources)
}

func isLeaf(v any, ptr string, sources map[string]string) bool {
	if _, named := sources[ptr]; named {
		return true
	}
	switch v := v.(type) {
	case map[string]any:
		return len(v) == 0
	case []any:
		for p := range sources {
			if strings.HasPrefix(p, ptr+"/") {
				return false
			}
		}
		return true
	}
	return true
}

// leaf is "name: value ← source".
func leaf(name string, v any, source string) []tree.Span {
	line := []tree.Span{tree.P(name + ": " + value(v))}
	if source != "" {
		line = append(line, tree.S(tree.Source, "  ← "+source))
	}
	return line
}

// value writes a leaf's value: a string bare when it reads as one, anything
// else as compact JSON.
func value(v any) string {
	if s, ok := v.(string); ok && plainString(s) {
		return s
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // a regular expression's "<" stays "<"
	if err := enc.Encode(v); err != nil {
		return "?"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// plainString: a string that cannot be mistaken for another value (a
// number, true, null, "") or hide its ends in spaces is written bare.
func plainString(s string) bool {
	if s == "" || strings.TrimSpace(s) != s || strings.ContainsAny(s, "\n\"") {
		return false
	}
	switch s {
	case "true", "false", "null", "{}", "[]":
		return false
	}
	_, err := strconv.ParseFloat(s, 64)
	return err != nil
}

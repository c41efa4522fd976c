package merge

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/jsonpointer"
)

// Value is an immutable JSON value annotated with provenance: every leaf (a
// scalar, null, a list that is not a list-map, or an empty object) records
// the index of the entry that set it. Objects and list-maps are inner nodes.
// The exported fields are those a profile reads or sets when it builds a
// value of its own.
type Value struct {
	Obj     map[string]*Value // object (IsObj)
	items   []*Value          // list-map items (isMap)
	leaf    interface{}       // scalar, nil (null) or []interface{}
	Src     int               // entry index of a leaf or an empty object
	IsObj   bool
	isMap   bool
	MapKeys []string
	Atomic  bool // an object a merge replaces whole (a profile's unit, e.g. a Kuadrant limit)
	// WholeList: a list-map that is one leaf, set by the entry that merged
	// it last (lists a profile merges by key although the CRD does not say
	// so, e.g. Envoy Gateway's StrategicMerge).
	WholeList bool
}

func (v *Value) isNull() bool { return v != nil && !v.IsObj && !v.isMap && v.leaf == nil }

// SchemaChild is the schema of property k of s: a declared property, else
// additionalProperties (nil when s says nothing of k).
func SchemaChild(s *apiextv1.JSONSchemaProps, k string) *apiextv1.JSONSchemaProps {
	if s == nil {
		return nil
	}
	if p, ok := s.Properties[k]; ok {
		return &p
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		return s.AdditionalProperties.Schema
	}
	return nil
}

// Schema is what merging needs of a CRD schema: where the list-maps are.
// It is compiled once per policy kind and stanza path (Compile) and
// pruned: a subtree without list-maps is nil, so that Build does not walk
// (and copy) JSONSchemaProps for every value of every fold.
type Schema struct {
	props      map[string]*Schema // with additional set: every property, nil ones too
	additional *Schema
	items      *Schema
	MapKeys    []string
	Atomic     bool // objects here are merged whole, never field by field
	WholeList  bool // the list-map here is one leaf (see Value.WholeList)
}

// Child is the schema of property (or map key) k.
func (m *Schema) Child(k string) *Schema {
	if m == nil {
		return nil
	}
	if c, ok := m.props[k]; ok {
		return c
	}
	return m.additional
}

func (m *Schema) itemSchema() *Schema {
	if m == nil {
		return nil
	}
	return m.items
}

func (m *Schema) listMapKeys() []string {
	if m == nil {
		return nil
	}
	return m.MapKeys
}

// MaxDepth bounds how deeply a spec may nest: the engine finds a spec nested
// deeper Invalid (compute.MaxSpecDepth is this value), so Compile never
// walks a schema further.
const MaxDepth = 1000

// Compile compiles what merging needs of s (nil when s has no list-map and
// no object merged whole).
func Compile(s *apiextv1.JSONSchemaProps) *Schema { return compile(s, 0) }

// compile compiles s; depth bounds the walk (a spec nested deeper than
// MaxDepth is Invalid, so deeper schema levels never matter).
func compile(s *apiextv1.JSONSchemaProps, depth int) *Schema {
	if s == nil || depth > MaxDepth+1 {
		return nil
	}
	m := &Schema{}
	if s.XListType != nil && *s.XListType == "map" && len(s.XListMapKeys) > 0 {
		m.MapKeys = s.XListMapKeys
	}
	if s.Items != nil {
		m.items = compile(s.Items.Schema, depth+1)
	}
	if s.AdditionalProperties != nil {
		m.additional = compile(s.AdditionalProperties.Schema, depth+1)
	}
	for k := range s.Properties {
		p := s.Properties[k]
		c := compile(&p, depth+1)
		if c != nil || m.additional != nil {
			if m.props == nil {
				m.props = map[string]*Schema{}
			}
			m.props[k] = c
		}
	}
	if m.MapKeys == nil && m.items == nil && m.additional == nil {
		pruned := true
		for _, c := range m.props {
			if c != nil {
				pruned = false
				break
			}
		}
		if pruned {
			return nil
		}
	}
	return m
}

// Build turns a JSON value into a Value whose leaves all come from src.
func Build(v interface{}, src int, s *Schema) *Value {
	switch t := v.(type) {
	case map[string]interface{}:
		o := &Value{IsObj: true, Obj: make(map[string]*Value, len(t)), Src: src, Atomic: s != nil && s.Atomic}
		for k, c := range t {
			o.Obj[k] = Build(c, src, s.Child(k))
		}
		return o
	case []interface{}:
		if keys := s.listMapKeys(); keys != nil && allObjects(t) {
			is := s.itemSchema()
			l := &Value{isMap: true, MapKeys: keys, Src: src, WholeList: s.WholeList, items: make([]*Value, 0, len(t))}
			for _, it := range t {
				l.items = append(l.items, Build(it, src, is))
			}
			return l
		}
		return &Value{leaf: t, Src: src}
	default:
		return &Value{leaf: v, Src: src}
	}
}

func allObjects(l []interface{}) bool {
	for _, it := range l {
		if _, ok := it.(map[string]interface{}); !ok {
			return false
		}
	}
	return true
}

// Patch applies patch to target following RFC 7386, except that lists
// the schema marks x-kubernetes-list-type: map are merged item by item on
// their list-map keys. Neither input is modified.
func Patch(target, patch *Value) *Value {
	if patch == nil {
		return target
	}
	if patch.isMap {
		if target != nil && target.isMap {
			return mergeListMap(target, patch)
		}
		return patch
	}
	if !patch.IsObj || patch.Atomic {
		return patch
	}
	res := &Value{IsObj: true, Src: patch.Src}
	if target != nil && target.IsObj {
		res.Obj = make(map[string]*Value, len(target.Obj)+len(patch.Obj))
		for k, c := range target.Obj {
			res.Obj[k] = c
		}
	} else {
		res.Obj = make(map[string]*Value, len(patch.Obj))
	}
	for k, pc := range patch.Obj {
		if pc.isNull() {
			delete(res.Obj, k)
			continue
		}
		res.Obj[k] = Patch(res.Obj[k], pc)
	}
	return res
}

func itemKey(it *Value, keys []string) (string, bool) {
	if it == nil || !it.IsObj {
		return "", false
	}
	var b strings.Builder
	for _, k := range keys {
		c, ok := it.Obj[k]
		if !ok || c.IsObj || c.isMap {
			return "", false
		}
		fmt.Fprintf(&b, "%T:%v\x00", c.leaf, c.leaf)
	}
	return b.String(), true
}

func mergeListMap(target, patch *Value) *Value {
	if patch.WholeList {
		return mergeStrategicList(target, patch)
	}
	res := &Value{isMap: true, MapKeys: patch.MapKeys, Src: patch.Src, WholeList: patch.WholeList, items: make([]*Value, 0, len(target.items)+len(patch.items))}
	res.items = append(res.items, target.items...)
	idx := map[string]int{}
	for i, it := range res.items {
		if k, ok := itemKey(it, patch.MapKeys); ok {
			if _, dup := idx[k]; !dup {
				idx[k] = i
			}
		}
	}
	for _, it := range patch.items {
		if k, ok := itemKey(it, patch.MapKeys); ok {
			if i, found := idx[k]; found {
				res.items[i] = Patch(res.items[i], it)
				continue
			}
			idx[k] = len(res.items)
		}
		res.items = append(res.items, it)
	}
	return res
}

// mergeStrategicList merges a list by its keys and orders the result as Kubernetes' strategic
// merge patch does (k8s.io/apimachinery/pkg/util/strategicpatch, normalizeElementOrder and
// mergeSortedSlice; Envoy Gateway's StrategicMerge uses it): the patch's items (each merged with
// the target's item of the same key) in the patch's order and the target's other items in
// theirs, interleaved by position in the target where both have one, else patch items first.
func mergeStrategicList(target, patch *Value) *Value {
	pos := map[string]int{} // key -> index in target
	for i, t := range target.items {
		if k, ok := itemKey(t, patch.MapKeys); ok {
			if _, dup := pos[k]; !dup {
				pos[k] = i
			}
		}
	}
	type placed struct {
		v   *Value
		pos int // index in target, -1 when not there
	}
	var left []placed
	used := make([]bool, len(target.items))
	for _, it := range patch.items {
		p := placed{v: it, pos: -1}
		if k, ok := itemKey(it, patch.MapKeys); ok {
			if i, found := pos[k]; found && !used[i] {
				used[i] = true
				p = placed{v: Patch(target.items[i], it), pos: i}
			}
		}
		left = append(left, p)
	}
	var right []placed
	for i, t := range target.items {
		if !used[i] {
			right = append(right, placed{v: t, pos: i})
		}
	}
	res := &Value{isMap: true, MapKeys: patch.MapKeys, Src: patch.Src, WholeList: true, items: make([]*Value, 0, len(left)+len(right))}
	for len(left) > 0 || len(right) > 0 {
		if len(right) == 0 || len(left) > 0 && (left[0].pos < 0 || left[0].pos < right[0].pos) {
			res.items = append(res.items, left[0].v)
			left = left[1:]
			continue
		}
		res.items = append(res.items, right[0].v)
		right = right[1:]
	}
	return res
}

// StripNulls removes null leaves (they only ever mean "remove").
func StripNulls(v *Value) *Value {
	if v == nil {
		return nil
	}
	switch {
	case v.IsObj:
		changed := false
		for _, c := range v.Obj {
			if c.isNull() || c.IsObj || c.isMap {
				changed = true
				break
			}
		}
		if !changed {
			return v
		}
		res := &Value{IsObj: true, Src: v.Src, Atomic: v.Atomic, Obj: make(map[string]*Value, len(v.Obj))}
		for k, c := range v.Obj {
			if c.isNull() {
				continue
			}
			res.Obj[k] = StripNulls(c)
		}
		return res
	case v.isMap:
		res := &Value{isMap: true, MapKeys: v.MapKeys, Src: v.Src, WholeList: v.WholeList, items: make([]*Value, 0, len(v.items))}
		for _, it := range v.items {
			res.items = append(res.items, StripNulls(it))
		}
		return res
	}
	return v
}

// IsEmpty reports whether v is absent or an object of nulls only.
func IsEmpty(v *Value) bool {
	if v == nil {
		return true
	}
	if v.IsObj {
		for _, c := range v.Obj {
			if !c.isNull() {
				return false
			}
		}
		return true
	}
	return false
}

// ToJSON converts back to plain JSON values.
func ToJSON(v *Value) interface{} {
	switch {
	case v == nil:
		return nil
	case v.IsObj:
		m := make(map[string]interface{}, len(v.Obj))
		for k, c := range v.Obj {
			m[k] = ToJSON(c)
		}
		return m
	case v.isMap:
		l := make([]interface{}, 0, len(v.items))
		for _, it := range v.items {
			l = append(l, ToJSON(it))
		}
		return l
	}
	return v.leaf
}

// WalkLeaves calls fn for every leaf with its JSON pointer. The pointer is
// built in one shared buffer (appended on the way down, truncated on the
// way up), so a deeply nested value costs time linear in its size, not
// quadratic in its depth.
func WalkLeaves(v *Value, ptr string, fn func(ptr string, src int)) {
	buf := make([]byte, 0, len(ptr)+64)
	walkLeavesBuf(v, append(buf, ptr...), fn)
}

func walkLeavesBuf(v *Value, buf []byte, fn func(ptr string, src int)) []byte {
	switch {
	case v == nil:
	case v.IsObj:
		if len(v.Obj) == 0 {
			fn(string(buf), v.Src)
			return buf
		}
		keys := make([]string, 0, len(v.Obj))
		for k := range v.Obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		n := len(buf)
		for _, k := range keys {
			buf = walkLeavesBuf(v.Obj[k], append(append(buf, '/'), jsonpointer.Escape(k)...), fn)[:n]
		}
	case v.isMap:
		if len(v.items) == 0 || v.WholeList {
			fn(string(buf), v.Src)
			return buf
		}
		n := len(buf)
		for i, it := range v.items {
			buf = walkLeavesBuf(it, strconv.AppendInt(append(buf, '/'), int64(i), 10), fn)[:n]
		}
	default:
		fn(string(buf), v.Src)
	}
	return buf
}

// WithPath returns a copy of m in which the node at path (field names; "*"
// for every key of a map) has been changed by set, creating the nodes on
// the way: profiles add what their implementation declares outside the CRD
// schema (list keys from Go struct tags, objects merged whole).
func WithPath(m *Schema, path []string, set func(*Schema)) *Schema {
	c := &Schema{}
	if m != nil {
		*c = *m
		if m.props != nil {
			c.props = make(map[string]*Schema, len(m.props)+1)
			for k, v := range m.props {
				c.props[k] = v
			}
		}
	}
	if len(path) == 0 {
		set(c)
		return c
	}
	if path[0] == "*" {
		c.additional = WithPath(c.additional, path[1:], set)
		return c
	}
	if c.props == nil {
		c.props = map[string]*Schema{}
	}
	c.props[path[0]] = WithPath(c.Child(path[0]), path[1:], set)
	return c
}

// Ordered is the value of a kind whose policies all apply (docs/spec.md §4.1): a list whose
// item i is the whole spec specs[i], one leaf of fieldSources ("/<i>") set by entry srcs[i].
func Ordered(specs []interface{}, srcs []int) *Value {
	l := &Value{isMap: true, items: make([]*Value, len(specs))}
	for i, s := range specs {
		l.items[i] = &Value{leaf: s, Src: srcs[i]}
	}
	if len(srcs) > 0 {
		l.Src = srcs[0]
	}
	return l
}

// List is a list whose items keep their own provenance (each item a value a profile built),
// as Ordered's do: fieldSources has one key per leaf under "/<i>". The list's own Src, which
// counts only when it is empty, is src.
func List(items []*Value, src int) *Value {
	return &Value{isMap: true, items: items, Src: src}
}

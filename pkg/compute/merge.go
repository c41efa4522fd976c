package compute

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/jsonpointer"
)

// pv is an immutable JSON value annotated with provenance: every leaf (a
// scalar, null, a list that is not a list-map, or an empty object) records
// the index of the entry that set it. Objects and list-maps are inner nodes.
type pv struct {
	obj     map[string]*pv // object (isObj)
	items   []*pv          // list-map items (isMap)
	leaf    interface{}    // scalar, nil (null) or []interface{}
	src     int            // entry index of a leaf or an empty object
	isObj   bool
	isMap   bool
	mapKeys []string
	atomic  bool // an object a merge replaces whole (a profile's unit, e.g. a Kuadrant limit)
	// wholeList: a list-map that is one leaf, set by the entry that merged
	// it last (lists a profile merges by key although the CRD does not say
	// so, e.g. Envoy Gateway's StrategicMerge).
	wholeList bool
}

func (v *pv) isNull() bool { return v != nil && !v.isObj && !v.isMap && v.leaf == nil }

func schemaChild(s *apiextv1.JSONSchemaProps, k string) *apiextv1.JSONSchemaProps {
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

// mschema is what merging needs of a CRD schema: where the list-maps are.
// It is compiled once per policy kind and stanza path (compileMerge) and
// pruned: a subtree without list-maps is nil, so that build does not walk
// (and copy) JSONSchemaProps for every value of every fold.
type mschema struct {
	props      map[string]*mschema // with additional set: every property, nil ones too
	additional *mschema
	items      *mschema
	mapKeys    []string
	atomic     bool // objects here are merged whole, never field by field
	wholeList  bool // the list-map here is one leaf (see pv.wholeList)
}

func (m *mschema) child(k string) *mschema {
	if m == nil {
		return nil
	}
	if c, ok := m.props[k]; ok {
		return c
	}
	return m.additional
}

func (m *mschema) itemSchema() *mschema {
	if m == nil {
		return nil
	}
	return m.items
}

func (m *mschema) listMapKeys() []string {
	if m == nil {
		return nil
	}
	return m.mapKeys
}

// compileMerge compiles s; depth bounds the walk (a spec nested deeper than
// MaxSpecDepth is Invalid, so deeper schema levels never matter).
func compileMerge(s *apiextv1.JSONSchemaProps, depth int) *mschema {
	if s == nil || depth > MaxSpecDepth+1 {
		return nil
	}
	m := &mschema{}
	if s.XListType != nil && *s.XListType == "map" && len(s.XListMapKeys) > 0 {
		m.mapKeys = s.XListMapKeys
	}
	if s.Items != nil {
		m.items = compileMerge(s.Items.Schema, depth+1)
	}
	if s.AdditionalProperties != nil {
		m.additional = compileMerge(s.AdditionalProperties.Schema, depth+1)
	}
	for k := range s.Properties {
		p := s.Properties[k]
		c := compileMerge(&p, depth+1)
		if c != nil || m.additional != nil {
			if m.props == nil {
				m.props = map[string]*mschema{}
			}
			m.props[k] = c
		}
	}
	if m.mapKeys == nil && m.items == nil && m.additional == nil {
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

// build turns a JSON value into a pv whose leaves all come from src.
func build(v interface{}, src int, s *mschema) *pv {
	switch t := v.(type) {
	case map[string]interface{}:
		o := &pv{isObj: true, obj: make(map[string]*pv, len(t)), src: src, atomic: s != nil && s.atomic}
		for k, c := range t {
			o.obj[k] = build(c, src, s.child(k))
		}
		return o
	case []interface{}:
		if keys := s.listMapKeys(); keys != nil && allObjects(t) {
			is := s.itemSchema()
			l := &pv{isMap: true, mapKeys: keys, src: src, wholeList: s.wholeList, items: make([]*pv, 0, len(t))}
			for _, it := range t {
				l.items = append(l.items, build(it, src, is))
			}
			return l
		}
		return &pv{leaf: t, src: src}
	default:
		return &pv{leaf: v, src: src}
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

// mergePatch applies patch to target following RFC 7386, except that lists
// the schema marks x-kubernetes-list-type: map are merged item by item on
// their list-map keys. Neither input is modified.
func mergePatch(target, patch *pv) *pv {
	if patch == nil {
		return target
	}
	if patch.isMap {
		if target != nil && target.isMap {
			return mergeListMap(target, patch)
		}
		return patch
	}
	if !patch.isObj || patch.atomic {
		return patch
	}
	res := &pv{isObj: true, src: patch.src}
	if target != nil && target.isObj {
		res.obj = make(map[string]*pv, len(target.obj)+len(patch.obj))
		for k, c := range target.obj {
			res.obj[k] = c
		}
	} else {
		res.obj = make(map[string]*pv, len(patch.obj))
	}
	for k, pc := range patch.obj {
		if pc.isNull() {
			delete(res.obj, k)
			continue
		}
		res.obj[k] = mergePatch(res.obj[k], pc)
	}
	return res
}

func itemKey(it *pv, keys []string) (string, bool) {
	if it == nil || !it.isObj {
		return "", false
	}
	var b strings.Builder
	for _, k := range keys {
		c, ok := it.obj[k]
		if !ok || c.isObj || c.isMap {
			return "", false
		}
		fmt.Fprintf(&b, "%T:%v\x00", c.leaf, c.leaf)
	}
	return b.String(), true
}

func mergeListMap(target, patch *pv) *pv {
	if patch.wholeList {
		return mergeStrategicList(target, patch)
	}
	res := &pv{isMap: true, mapKeys: patch.mapKeys, src: patch.src, wholeList: patch.wholeList, items: make([]*pv, 0, len(target.items)+len(patch.items))}
	res.items = append(res.items, target.items...)
	idx := map[string]int{}
	for i, it := range res.items {
		if k, ok := itemKey(it, patch.mapKeys); ok {
			if _, dup := idx[k]; !dup {
				idx[k] = i
			}
		}
	}
	for _, it := range patch.items {
		if k, ok := itemKey(it, patch.mapKeys); ok {
			if i, found := idx[k]; found {
				res.items[i] = mergePatch(res.items[i], it)
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
func mergeStrategicList(target, patch *pv) *pv {
	pos := map[string]int{} // key -> index in target
	for i, t := range target.items {
		if k, ok := itemKey(t, patch.mapKeys); ok {
			if _, dup := pos[k]; !dup {
				pos[k] = i
			}
		}
	}
	type placed struct {
		v   *pv
		pos int // index in target, -1 when not there
	}
	var left []placed
	used := make([]bool, len(target.items))
	for _, it := range patch.items {
		p := placed{v: it, pos: -1}
		if k, ok := itemKey(it, patch.mapKeys); ok {
			if i, found := pos[k]; found && !used[i] {
				used[i] = true
				p = placed{v: mergePatch(target.items[i], it), pos: i}
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
	res := &pv{isMap: true, mapKeys: patch.mapKeys, src: patch.src, wholeList: true, items: make([]*pv, 0, len(left)+len(right))}
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

// stripNulls removes null leaves (they only ever mean "remove").
func stripNulls(v *pv) *pv {
	if v == nil {
		return nil
	}
	switch {
	case v.isObj:
		changed := false
		for _, c := range v.obj {
			if c.isNull() || c.isObj || c.isMap {
				changed = true
				break
			}
		}
		if !changed {
			return v
		}
		res := &pv{isObj: true, src: v.src, atomic: v.atomic, obj: make(map[string]*pv, len(v.obj))}
		for k, c := range v.obj {
			if c.isNull() {
				continue
			}
			res.obj[k] = stripNulls(c)
		}
		return res
	case v.isMap:
		res := &pv{isMap: true, mapKeys: v.mapKeys, src: v.src, wholeList: v.wholeList, items: make([]*pv, 0, len(v.items))}
		for _, it := range v.items {
			res.items = append(res.items, stripNulls(it))
		}
		return res
	}
	return v
}

func isEmptyValue(v *pv) bool {
	if v == nil {
		return true
	}
	if v.isObj {
		for _, c := range v.obj {
			if !c.isNull() {
				return false
			}
		}
		return true
	}
	return false
}

// toJSON converts back to plain JSON values.
func toJSON(v *pv) interface{} {
	switch {
	case v == nil:
		return nil
	case v.isObj:
		m := make(map[string]interface{}, len(v.obj))
		for k, c := range v.obj {
			m[k] = toJSON(c)
		}
		return m
	case v.isMap:
		l := make([]interface{}, 0, len(v.items))
		for _, it := range v.items {
			l = append(l, toJSON(it))
		}
		return l
	}
	return v.leaf
}

// walkLeaves calls fn for every leaf with its JSON pointer. The pointer is
// built in one shared buffer (appended on the way down, truncated on the
// way up), so a deeply nested value costs time linear in its size, not
// quadratic in its depth.
func walkLeaves(v *pv, ptr string, fn func(ptr string, src int)) {
	buf := make([]byte, 0, len(ptr)+64)
	walkLeavesBuf(v, append(buf, ptr...), fn)
}

func walkLeavesBuf(v *pv, buf []byte, fn func(ptr string, src int)) []byte {
	switch {
	case v == nil:
	case v.isObj:
		if len(v.obj) == 0 {
			fn(string(buf), v.src)
			return buf
		}
		keys := make([]string, 0, len(v.obj))
		for k := range v.obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		n := len(buf)
		for _, k := range keys {
			buf = walkLeavesBuf(v.obj[k], append(append(buf, '/'), jsonpointer.Escape(k)...), fn)[:n]
		}
	case v.isMap:
		if len(v.items) == 0 || v.wholeList {
			fn(string(buf), v.src)
			return buf
		}
		n := len(buf)
		for i, it := range v.items {
			buf = walkLeavesBuf(it, strconv.AppendInt(append(buf, '/'), int64(i), 10), fn)[:n]
		}
	default:
		fn(string(buf), v.src)
	}
	return buf
}

// withPath returns a copy of m in which the node at path (field names; "*"
// for every key of a map) has been changed by set, creating the nodes on
// the way: profiles add what their implementation declares outside the CRD
// schema (list keys from Go struct tags, objects merged whole).
func withPath(m *mschema, path []string, set func(*mschema)) *mschema {
	c := &mschema{}
	if m != nil {
		*c = *m
		if m.props != nil {
			c.props = make(map[string]*mschema, len(m.props)+1)
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
		c.additional = withPath(c.additional, path[1:], set)
		return c
	}
	if c.props == nil {
		c.props = map[string]*mschema{}
	}
	c.props[path[0]] = withPath(c.child(path[0]), path[1:], set)
	return c
}

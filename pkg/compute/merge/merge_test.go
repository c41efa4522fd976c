package merge

import (
	"github.com/effectivepolicy-dev/effectivepolicy/internal/jsontest"

	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"runtime"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func randJSON(r *rand.Rand, depth int, nulls bool) interface{} {
	switch k := r.Intn(7); {
	case depth > 3 || k == 0:
		return fmt.Sprint("s", r.Intn(3))
	case k == 1:
		return int64(r.Intn(5))
	case k == 2 && nulls:
		return nil
	case k == 3:
		l := []interface{}{}
		for i := r.Intn(3); i > 0; i-- {
			l = append(l, randJSON(r, depth+1, false))
		}
		return l
	default:
		m := map[string]interface{}{}
		for i := r.Intn(4); i > 0; i-- {
			m[fmt.Sprint("k", r.Intn(4))] = randJSON(r, depth+1, nulls)
		}
		return m
	}
}

// checkAgainstOracle compares mergePatch (no list-map schema) with
// evanphx/json-patch's RFC 7386 MergePatch.
func checkAgainstOracle(t *testing.T, doc, patch interface{}) {
	t.Helper()
	db, _ := json.Marshal(doc)
	pb, _ := json.Marshal(patch)
	want, err := jsonpatch.MergePatch(db, pb)
	if err != nil {
		return // the oracle rejects non-object documents in some versions
	}
	got := mustJSON(ToJSON(StripNulls(Patch(Build(doc, 0, nil), Build(patch, 1, nil)))))
	if jsontest.Canonical(t, got) != jsontest.Canonical(t, want) {
		t.Fatalf("merge(%s, %s) = %s, oracle %s", db, pb, got, want)
	}
}

func TestMergePatchMatchesRFC7386(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for i := 0; i < 5000; i++ {
		doc := map[string]interface{}{}
		for j := r.Intn(4); j > 0; j-- {
			doc[fmt.Sprint("k", r.Intn(4))] = randJSON(r, 1, false)
		}
		patch := map[string]interface{}{}
		for j := r.Intn(4); j > 0; j-- {
			patch[fmt.Sprint("k", r.Intn(4))] = randJSON(r, 1, true)
		}
		checkAgainstOracle(t, doc, patch)
	}
}

func FuzzMergePatch(f *testing.F) {
	f.Add([]byte(`{"a":{"b":1,"c":[1]}}`), []byte(`{"a":{"b":null,"d":{"e":null}},"f":[]}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var doc, patch map[string]interface{}
		if json.Unmarshal(a, &doc) != nil || json.Unmarshal(b, &patch) != nil || doc == nil || patch == nil {
			return
		}
		if hasNull(doc) {
			return // a document (not a patch) never holds nulls here
		}
		checkAgainstOracle(t, doc, patch)
	})
}

func hasNull(v interface{}) bool {
	switch t := v.(type) {
	case nil:
		return true
	case map[string]interface{}:
		for _, c := range t {
			if hasNull(c) {
				return true
			}
		}
	case []interface{}:
		for _, c := range t {
			if hasNull(c) {
				return true
			}
		}
	}
	return false
}

func TestListMapMergeProvenance(t *testing.T) {
	lt := "map"
	s := &apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
		"l": {Type: "array", XListType: &lt, XListMapKeys: []string{"name", "port"},
			Items: &apiextv1.JSONSchemaPropsOrArray{Schema: &apiextv1.JSONSchemaProps{Type: "object"}}},
	}}
	doc := map[string]interface{}{"l": []interface{}{
		map[string]interface{}{"name": "a", "port": int64(1), "v": "old"},
		map[string]interface{}{"name": "a", "port": int64(2), "v": "keep"},
		map[string]interface{}{"v": "no key"},
	}}
	patch := map[string]interface{}{"l": []interface{}{
		map[string]interface{}{"name": "a", "port": int64(1), "v": "new", "x": nil},
		map[string]interface{}{"name": "b", "port": int64(1)},
	}}
	res := StripNulls(Patch(Build(doc, 0, compile(s, 0)), Build(patch, 1, compile(s, 0))))
	got := string(mustJSON(ToJSON(res)))
	want := `{"l":[{"name":"a","port":1,"v":"new"},{"name":"a","port":2,"v":"keep"},{"v":"no key"},{"name":"b","port":1}]}`
	if got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	srcs := map[string]int{}
	WalkLeaves(res, "", func(p string, src int) { srcs[p] = src })
	for p, w := range map[string]int{"/l/0/v": 1, "/l/1/v": 0, "/l/2/v": 0, "/l/3/name": 1} {
		if srcs[p] != w {
			t.Errorf("%s from %d, want %d (%v)", p, srcs[p], w, srcs)
		}
	}
	// A plain list is replaced whole and is one leaf.
	res = Patch(Build(map[string]interface{}{"p": []interface{}{1}}, 0, nil), Build(map[string]interface{}{"p": []interface{}{2, 3}}, 1, nil))
	n := 0
	WalkLeaves(res, "", func(p string, src int) {
		n++
		if p != "/p" || src != 1 {
			t.Errorf("leaf %s src %d", p, src)
		}
	})
	if n != 1 {
		t.Errorf("%d leaves", n)
	}
	// Escaping of JSON pointers.
	res = Build(map[string]interface{}{"a/b": map[string]interface{}{"c~d": 1, "e": map[string]interface{}{}}}, 3, nil)
	var ptrs []string
	WalkLeaves(res, "", func(p string, _ int) { ptrs = append(ptrs, p) })
	if fmt.Sprint(ptrs) != "[/a~1b/c~0d /a~1b/e]" {
		t.Errorf("pointers %v", ptrs)
	}
}

// TestWalkLeavesDeep: the leaves of a value nested 200,000 levels deep are
// walked in linear time and space (the pointer used to be rebuilt at every
// level: quadratic, about 100 s and tens of GB allocated for 100,000
// levels). Bytes allocated, not wall time, are asserted: they do not depend
// on how busy the machine is.
func TestWalkLeavesDeep(t *testing.T) {
	const depth = 200000
	leaf := &Value{Src: 1}
	v := leaf
	for i := 0; i < depth; i++ {
		v = &Value{IsObj: true, Obj: map[string]*Value{"a~/": v}}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var ptrs []string
	WalkLeaves(v, "", func(p string, _ int) { ptrs = append(ptrs, p) })
	runtime.ReadMemStats(&after)
	if len(ptrs) != 1 || ptrs[0] != strings.Repeat("/a~0~1", depth) {
		t.Fatalf("got %d pointers (first %d bytes)", len(ptrs), len(ptrs[0]))
	}
	// The pointer is 1.2 MB; linear work allocates a small multiple of it
	// (stack growth included), quadratic work over 100 GB.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
		t.Fatalf("walking allocated %d bytes: not linear", alloc)
	}
	// A list-map walk keeps sibling pointers apart.
	lm := &Value{IsObj: true, Obj: map[string]*Value{
		"l": {isMap: true, items: []*Value{{IsObj: true, Obj: map[string]*Value{"k": {Src: 2}, "x": {Src: 3}}}, {Src: 4}}},
		"z": {Src: 5},
	}}
	ptrs = nil
	WalkLeaves(lm, "", func(p string, _ int) { ptrs = append(ptrs, p) })
	if got := strings.Join(ptrs, " "); got != "/l/0/k /l/0/x /l/1 /z" {
		t.Fatalf("pointers %q", got)
	}
}

// TestCompileMerge: the compiled merge schema finds list-maps where
// schemaChild would (a declared property shadows additionalProperties) and
// prunes subtrees without list-maps.
func TestCompileMerge(t *testing.T) {
	lt := "map"
	listMap := apiextv1.JSONSchemaProps{Type: "array", XListType: &lt, XListMapKeys: []string{"name"},
		Items: &apiextv1.JSONSchemaPropsOrArray{Schema: &apiextv1.JSONSchemaProps{Type: "object"}}}
	s := &apiextv1.JSONSchemaProps{Type: "object",
		Properties: map[string]apiextv1.JSONSchemaProps{
			"plain":  {Type: "array", Items: &apiextv1.JSONSchemaPropsOrArray{Schema: &apiextv1.JSONSchemaProps{Type: "string"}}},
			"nested": {Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{"l": listMap}},
		},
		AdditionalProperties: &apiextv1.JSONSchemaPropsOrBool{Schema: &listMap},
	}
	m := compile(s, 0)
	cases := []struct {
		path []string
		keys []string
	}{
		{[]string{"plain"}, nil},              // declared: shadows additionalProperties
		{[]string{"other"}, []string{"name"}}, // undeclared: additionalProperties
		{[]string{"nested", "l"}, []string{"name"}},
		{[]string{"nested", "x"}, nil},
	}
	for _, c := range cases {
		cur := m
		want := s
		for _, p := range c.path {
			cur = cur.Child(p)
			want = SchemaChild(want, p)
		}
		if got := cur.listMapKeys(); !reflect.DeepEqual(got, c.keys) {
			t.Errorf("%v: list-map keys %v, want %v", c.path, got, c.keys)
		}
		if wantKeys := listMapKeysOf(want); !reflect.DeepEqual(wantKeys, c.keys) {
			t.Errorf("%v: schemaChild gives %v, the table says %v", c.path, wantKeys, c.keys)
		}
	}
	if compile(&apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{"a": {Type: "string"}}}, 0) != nil {
		t.Errorf("a schema without list-maps compiles to a non-nil merge schema")
	}
}

func listMapKeysOf(s *apiextv1.JSONSchemaProps) []string {
	if s == nil || s.XListType == nil || *s.XListType != "map" || len(s.XListMapKeys) == 0 {
		return nil
	}
	return s.XListMapKeys
}

// mustJSON is the engine's encoding of a folded spec ({} when it does not encode).
func mustJSON(v interface{}) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte("{}")
	}
	return b
}

// An ordered value is a JSON list of whole specs, each one leaf "/<i>" of its own entry, even
// when the spec is an object (its fields are not leaves of their own).
func TestOrderedWholeItems(t *testing.T) {
	specs := []interface{}{
		map[string]interface{}{"priority": int64(-5), "jsonPatches": []interface{}{"a"}},
		map[string]interface{}{"priority": int64(10)},
		map[string]interface{}{},
	}
	v := Ordered(specs, []int{2, 0, 1})
	got := map[string]int{}
	WalkLeaves(StripNulls(v), "", func(ptr string, src int) { got[ptr] = src })
	want := map[string]int{"/0": 2, "/1": 0, "/2": 1}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("leaves = %v, want %v", got, want)
	}
	if j := ToJSON(v); !reflect.DeepEqual(j, specs) {
		t.Fatalf("ToJSON = %v, want %v", j, specs)
	}
}

// TestListKeepsItemSources: a list a profile builds of values of its own keeps every item's
// leaves with their entries (Istio's merged Telemetry: one item per provider, its fields from
// different policies).
func TestListKeepsItemSources(t *testing.T) {
	item := &Value{IsObj: true, Obj: map[string]*Value{
		"providers": Build([]interface{}{map[string]interface{}{"name": "envoy"}}, 0, nil),
		"filter":    Build(map[string]interface{}{"expression": "true"}, 2, nil),
	}}
	v := List([]*Value{item, Build(map[string]interface{}{"disabled": true}, 1, nil)}, 0)
	got := map[string]int{}
	WalkLeaves(StripNulls(v), "", func(ptr string, src int) { got[ptr] = src })
	want := map[string]int{"/0/providers": 0, "/0/filter/expression": 2, "/1/disabled": 1}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("leaves = %v, want %v", got, want)
	}
	wantJSON := []interface{}{
		map[string]interface{}{"providers": []interface{}{map[string]interface{}{"name": "envoy"}}, "filter": map[string]interface{}{"expression": "true"}},
		map[string]interface{}{"disabled": true},
	}
	if j := ToJSON(v); !reflect.DeepEqual(j, wantJSON) {
		t.Fatalf("ToJSON = %v, want %v", j, wantJSON)
	}
}

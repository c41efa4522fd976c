package compute

import (
	"bytes"
	"encoding/json"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// fuzzKinds are the policy kinds fuzzed policies take: the example kinds of testCRDs, then every
// built-in kind of the implementations' groups as descriptorCRDs serves it, so that a kind added
// to a profile is fuzzed with no change here.
var fuzzKinds = append([]schema.GroupVersionKind{
	{Group: "example.com", Version: "v1", Kind: "RetryPolicy"},
	{Group: "example.com", Version: "v1", Kind: "TimeoutPolicy"},
	{Group: "example.com", Version: "v1", Kind: "ClusterRetryPolicy"},
}, builtinFuzzKinds()...)

// fuzzGroups are the implementations' groups whose built-in kinds the fuzz target and the
// incremental profile test install (with open-schema CRDs).
var fuzzGroups = []string{"gateway.networking.k8s.io", "gateway.networking.x-k8s.io", "gateway.envoyproxy.io", "kuadrant.io", "gateway.nginx.org", "security.istio.io", "extensions.istio.io", "networking.istio.io", "telemetry.istio.io", "gateway.kgateway.dev"}

func builtinFuzzKinds() []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, g := range fuzzGroups {
		for _, crd := range descriptorCRDs(nopTB{}, g) {
			kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
			versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
			version := "v1alpha1"
			if len(versions) > 0 {
				if v, ok := versions[0].(map[string]interface{})["name"].(string); ok {
					version = v
				}
			}
			out = append(out, schema.GroupVersionKind{Group: g, Version: version, Kind: kind})
		}
	}
	return out
}

var (
	fuzzBaseOnce sync.Once
	fuzzBaseObjs []*unstructured.Unstructured
)

// fuzzBase parses the fixed part of the fuzz inputs once.
func fuzzBase() []*unstructured.Unstructured {
	fuzzBaseOnce.Do(func() {
		fuzzBaseObjs = parseDocsNoT(testCRDs)
		// The built-in kinds of the implementations, each with its profile.
		for _, g := range fuzzGroups {
			fuzzBaseObjs = append(fuzzBaseObjs, descriptorCRDs(nopTB{}, g)...)
		}
		fuzzBaseObjs = append(fuzzBaseObjs, parseDocsNoT(baseTopology)...)
	})
	return fuzzBaseObjs
}

func fuzzValue(b []byte) interface{} {
	var v interface{}
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(&v); err != nil {
		return string(b)
	}
	return normalizeNumbers(v)
}

// normalizeNumbers turns float64 into int64 where exact, as the API
// machinery's JSON decoding does.
func normalizeNumbers(v interface{}) interface{} {
	switch t := v.(type) {
	case float64:
		if t == float64(int64(t)) {
			return int64(t)
		}
		return t
	case map[string]interface{}:
		for k, c := range t {
			t[k] = normalizeNumbers(c)
		}
	case []interface{}:
		for i, c := range t {
			t[i] = normalizeNumbers(c)
		}
	}
	return v
}

// FuzzCompute feeds arbitrary policy specs (and an arbitrary route spec) to
// the engine: it must never panic, and two computations of the same inputs
// must give byte-identical outputs.
func FuzzCompute(f *testing.F) {
	seeds := []string{
		`{"targetRefs":[{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"gw"}],"defaults":{"a":1}}`,
		`{"targetRefs":[{"group":"gateway.networking.k8s.io","kind":"HTTPRoute","name":"rt","sectionName":"main"}],"overrides":{"strategy":"patch","listMaps":[{"name":"x","v":null}]}}`,
		`{"targetRef":{"group":"","kind":"Namespace","name":"appns"},"strategy":"merge","a":{"b":[1,2]}}`,
		`{"targetRefs":[{"kind":"HTTPRoute","selector":{"matchLabels":{"a":"b"}}}],"defaults":5}`,
		`{"targetSelectors":[{"kind":"HTTPRoute","matchLabels":{"x":"y"}}],"mergeType":"JSONMerge","x":null}`,
		`{"targetRefs":[{"group":"x.io","kind":"Virtual","name":"v","namespace":"other"}],"strategy":7}`,
		`{"targetSelectors":[{"kind":"HTTPRoute","matchLabels":{"x":"y"},"namespaces":{"from":"Selector","selector":{"matchLabels":{"a":"b"}}}}],"cors":{}}`,
		`{"targetRefs":[{"kind":"Service","name":"svc"},{"kind":"Service","name":"svc2"}],"zoneSize":"1k","keepAlive":{"connections":1}}`,
		`{"targetRef":{"group":"gateway.networking.k8s.io","kind":"HTTPRoute","name":"rt","sectionName":"rule-1"},"rules":{"authorization":{"x":{"when":[]}}}}`,
		`[1,2,3]`, `"str"`, `null`, `{}`,
	}
	route := `{"parentRefs":[{"name":"gw","sectionName":"https","port":443}],"rules":[{"name":"main","backendRefs":[{"name":"svc"}],"filters":[{"type":"RequestMirror","requestMirror":{"backendRef":{"name":"svc2"}}}]}]}`
	// Mesh routes: under a Service's port, and (the same bytes make the Service "fuzzed" too)
	// under the Service that is also their backend.
	meshRoutes := []string{
		`{"parentRefs":[{"group":"","kind":"Service","name":"svc","port":80}],"rules":[{"name":"main","backendRefs":[{"name":"svc"},{"name":"svc2"}]}]}`,
		`{"parentRefs":[{"group":"","kind":"Service","name":"fuzzed","sectionName":"http"}],"ports":[{"name":"http","port":80},{"port":81}],"rules":[{"name":"r","backendRefs":[{"name":"fuzzed"},{"name":"svc"}]}]}`,
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint8(i), []byte(seeds[(i+1)%len(seeds)]), []byte(route))
		f.Add([]byte(s), uint8(i), []byte(seeds[(i+2)%len(seeds)]), []byte(meshRoutes[i%len(meshRoutes)]))
	}
	f.Fuzz(fuzzOne)
}

// fuzzOne computes the base topology plus an object of every topology kind with routeSpec as its
// spec and three policies with spec and spec2 as theirs, of kinds sel picks: twice from scratch
// (the outputs must be byte-identical), then incrementally.
func fuzzOne(t *testing.T, spec []byte, sel uint8, spec2 []byte, routeSpec []byte) {
	old := recoverPanics
	recoverPanics = false
	defer func() { recoverPanics = old }()

	base := fuzzTopology(routeSpec)
	objs := append(base, stamp([]*unstructured.Unstructured{fuzzPolicy(spec, sel, "f1"), fuzzPolicy(spec2, sel/8, "f2"), fuzzPolicy(spec, sel/3, "f3")}, 0)...)
	a, b := renderAll(t, objs), renderAll(t, objs)
	if !bytes.Equal(a, b) {
		t.Fatalf("non-deterministic output")
	}
	checkFuzzIncremental(t, objs)
}

// fuzzTopology is a copy of fuzzBase plus one object named fuzzed of every topology kind, each
// with routeSpec decoded as its spec.
func fuzzTopology(routeSpec []byte) []*unstructured.Unstructured {
	var base []*unstructured.Unstructured
	for _, o := range fuzzBase() {
		base = append(base, o.DeepCopy())
	}
	// The same bytes serve as spec of every topology kind.
	for _, tk := range []struct{ apiVersion, kind, ns string }{
		{"gateway.networking.k8s.io/v1", "HTTPRoute", "appns"},
		{"gateway.networking.k8s.io/v1", "Gateway", "appns"},
		{"gateway.networking.k8s.io/v1", "ListenerSet", "appns"},
		{"gateway.networking.k8s.io/v1", "GatewayClass", ""},
		{"gateway.networking.k8s.io/v1beta1", "ReferenceGrant", "appns"},
		{"v1", "Service", "appns"},
	} {
		r := u(tk.apiVersion, tk.kind, tk.ns, "fuzzed", nil)
		r.Object["spec"] = fuzzValue(routeSpec)
		base = append(base, r)
	}
	return base
}

// fuzzPolicy is a policy of the fuzzKinds kind s picks, named name, with b decoded as its spec.
func fuzzPolicy(b []byte, s uint8, name string) *unstructured.Unstructured {
	gvk := fuzzKinds[int(s)%len(fuzzKinds)]
	p := &unstructured.Unstructured{Object: map[string]interface{}{}}
	p.SetGroupVersionKind(gvk)
	p.SetName(name)
	if gvk.Kind != "ClusterRetryPolicy" {
		p.SetNamespace("appns")
	}
	p.Object["spec"] = fuzzValue(b)
	return p
}

// renderAll is the JSON of every output ComputeAll makes of objs, in key order.
func renderAll(t *testing.T, objs []*unstructured.Unstructured) []byte {
	t.Helper()
	all, err := ComputeAll(objs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]Key, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	SortKeys(keys)
	var buf bytes.Buffer
	for _, k := range keys {
		b, err := json.Marshal(all[k])
		if err != nil {
			t.Fatalf("%v: %v", k, err)
		}
		buf.Write(b)
	}
	return buf.Bytes()
}

// checkFuzzIncremental feeds objs to an engine (CRDs first), deletes and re-adds the last three
// (the fuzzed policies), and checks that every key the engine lists has an output.
func checkFuzzIncremental(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	e, _ := NewEngine(Options{})
	for _, o := range objs {
		if isCRD(o) {
			e.Upsert(o)
		}
	}
	for _, o := range objs {
		if !isCRD(o) {
			e.Upsert(o)
		}
	}
	for _, o := range objs[len(objs)-3:] {
		e.Delete(o.GroupVersionKind().GroupKind(), o.GetNamespace(), o.GetName())
		e.Upsert(o)
	}
	for _, k := range e.Keys() {
		if _, ok := e.Compute(k); !ok {
			t.Fatalf("Keys lists %v without output", k)
		}
	}
}

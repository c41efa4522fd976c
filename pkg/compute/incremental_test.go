package compute

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

type objKey struct {
	gk       schema.GroupKind
	ns, name string
}

func keyOfObj(o *unstructured.Unstructured) objKey {
	return objKey{o.GroupVersionKind().GroupKind(), o.GetNamespace(), o.GetName()}
}

// snapshot renders every output of an engine as JSON.
func snapshot(t testing.TB, e *Engine) map[Key]string {
	out := map[Key]string{}
	for _, k := range e.Keys() {
		o, ok := e.Compute(k)
		if !ok {
			t.Fatalf("Keys lists %v but Compute has no output", k)
		}
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = string(b)
	}
	return out
}

func snapshotAll(t testing.TB, objs map[objKey]*unstructured.Unstructured) map[Key]string {
	var l []*unstructured.Unstructured
	keys := make([]objKey, 0, len(objs))
	for k := range objs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
	for _, k := range keys {
		l = append(l, objs[k])
	}
	all, err := ComputeAll(l, Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[Key]string{}
	for k, o := range all {
		b, _ := json.Marshal(o)
		out[k] = string(b)
	}
	return out
}

type mutation struct {
	name   string
	upsert []*unstructured.Unstructured
	del    []objKey
}

// TestIncremental applies mutations one by one and checks, after each, that
// the engine equals a full recomputation and that every key whose output
// changed was returned.
func TestIncremental(t *testing.T) {
	e, cur, before, muts := incrementalWorld(t)
	checkMutations(t, e, cur, before, muts)
}

// incrementalWorld is a generated topology fed to an engine in shuffled
// order, the objects it was fed, their outputs, and mutations of every kind.
func incrementalWorld(t *testing.T) (*Engine, map[objKey]*unstructured.Unstructured, map[Key]string, []mutation) {
	topo, pols := genTopology(genSpec{namespaces: 3, gatewaysPerNS: 2, routesPerGW: 4, servicesPerNS: 3, policies: 40, withListenerSet: true})
	e, cur := feedShuffled(topo, pols)
	before := snapshot(t, e)
	if want := snapshotAll(t, cur); !reflect.DeepEqual(before, want) {
		for k := range unionKeys(before, want) {
			if before[k] != want[k] {
				t.Errorf("%v:\n got %s\nwant %s", k, before[k], want[k])
			}
		}
		t.Fatalf("initial state differs from ComputeAll (%d vs %d keys)", len(before), len(want))
	}
	get := func(gk schema.GroupKind, ns, name string) *unstructured.Unstructured {
		o := cur[objKey{gk, ns, name}]
		if o == nil {
			t.Fatalf("no %v %s/%s", gk, ns, name)
		}
		return o.DeepCopy()
	}
	return e, cur, before, incrementalMutations(get)
}

// feedShuffled feeds topo and pols to a new engine in a shuffled order, CRDs first as informers
// would, and returns the engine and the objects it holds.
func feedShuffled(topo, pols []*unstructured.Unstructured) (*Engine, map[objKey]*unstructured.Unstructured) {
	cur := map[objKey]*unstructured.Unstructured{}
	e, _ := NewEngine(Options{})
	for _, o := range append(topo, pols...) {
		cur[keyOfObj(o)] = o
	}
	order := append([]*unstructured.Unstructured{}, append(topo, pols...)...)
	rand.New(rand.NewSource(1)).Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	for _, o := range order {
		if isCRD(o) {
			e.Upsert(o)
		}
	}
	for _, o := range order {
		if !isCRD(o) {
			e.Upsert(o)
		}
	}
	return e, cur
}

// checkMutations applies muts one by one to e and to cur (the objects a full recomputation is
// fed) and checks after each that e equals a full recomputation and that every key whose
// output changed was returned.
func checkMutations(t *testing.T, e *Engine, cur map[objKey]*unstructured.Unstructured, before map[Key]string, muts []mutation) {
	t.Helper()
	crdGK := schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
	for _, m := range muts {
		var ret []Key
		for _, o := range m.upsert {
			cur[keyOfObj(o)] = o
			ret = append(ret, e.Upsert(o)...)
		}
		for _, d := range m.del {
			if crd := cur[d]; d.gk == crdGK && crd != nil {
				// The engine forgets the policies of a deleted CRD, as the
				// informers stop; so does the reference.
				group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
				kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
				for k := range cur {
					if k.gk == (schema.GroupKind{Group: group, Kind: kind}) {
						delete(cur, k)
					}
				}
			}
			delete(cur, d)
			ret = append(ret, e.Delete(d.gk, d.ns, d.name)...)
		}
		after := snapshot(t, e)
		want := snapshotAll(t, cur)
		if !reflect.DeepEqual(after, want) {
			for k := range unionKeys(after, want) {
				if after[k] != want[k] {
					t.Errorf("%s: %v differs from full recomputation:\n got %s\nwant %s", m.name, k, after[k], want[k])
				}
			}
			t.FailNow()
		}
		returned := map[Key]bool{}
		for _, k := range ret {
			returned[k] = true
		}
		changed := 0
		for k := range unionKeys(before, after) {
			if before[k] != after[k] {
				changed++
				if !returned[k] {
					t.Errorf("%s: %v changed but was not returned (returned %v)", m.name, k, ret)
				}
			}
		}
		t.Logf("%s: %d changed, %d returned", m.name, changed, len(returned))
		before = after
	}
}

func unionKeys(a, b map[Key]string) map[Key]bool {
	out := map[Key]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// TestDeterminism: shuffled inputs give byte-identical outputs.
func TestDeterminism(t *testing.T) {
	topo, pols := genTopology(genSpec{namespaces: 2, gatewaysPerNS: 2, routesPerGW: 3, servicesPerNS: 2, policies: 30, withListenerSet: true})
	all := append(append([]*unstructured.Unstructured{}, topo...), pols...)
	render := func(m map[Key]runtime.Object) map[Key]string {
		out := map[Key]string{}
		for k, o := range m {
			b, _ := json.Marshal(o)
			out[k] = string(b)
		}
		return out
	}
	first, _ := ComputeAll(all, Options{})
	want := render(first)
	for seed := int64(0); seed < 5; seed++ {
		sh := append([]*unstructured.Unstructured{}, all...)
		rand.New(rand.NewSource(seed)).Shuffle(len(sh), func(i, j int) { sh[i], sh[j] = sh[j], sh[i] })
		got, _ := ComputeAll(sh, Options{})
		if g := render(got); !reflect.DeepEqual(g, want) {
			t.Fatalf("seed %d: outputs differ", seed)
		}
		if !reflect.DeepEqual(got, first) {
			t.Fatalf("seed %d: objects not deep-equal", seed)
		}
	}
}

// TestUpsertKeepsNoReferences: mutating an object after Upsert changes
// nothing until it is upserted again.
func TestUpsertKeepsNoReferences(t *testing.T) {
	objs := worldObjs(t, baseTopology, `
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: p, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  attempts: 1
`)
	e, _ := NewEngine(Options{})
	for _, o := range objs {
		e.Upsert(o)
	}
	before := snapshot(t, e)
	for _, o := range objs {
		if spec, ok := o.Object["spec"].(map[string]interface{}); ok {
			spec["attempts"] = int64(42)
			spec["gatewayClassName"] = "other"
		}
	}
	if after := snapshot(t, e); !reflect.DeepEqual(before, after) {
		t.Fatal("engine output changed when the caller mutated its objects")
	}
	p := objs[len(objs)-1]
	if ks := e.Upsert(p); len(ks) == 0 {
		t.Fatal("re-upsert of a changed policy returned no keys")
	}
}

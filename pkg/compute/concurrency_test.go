package compute

import (
	"encoding/json"
	"math/rand"
	"runtime"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestConcurrentComputeSharesMemo: goroutines computing keys concurrently
// through the shared memo (each in its own order, so that they race for the
// same contexts and folds) get exactly what a fresh engine computes key by
// key, before and after value edits (folds invalidated by attachment
// generation) and structural edits (contexts dropped). Run with -race.
func TestConcurrentComputeSharesMemo(t *testing.T) {
	topo, pols := genTopology(genSpec{namespaces: 3, gatewaysPerNS: 2, routesPerGW: 6, servicesPerNS: 3, policies: 60, withListenerSet: true})
	objs := append(append([]*unstructured.Unstructured{}, topo...), pols...)
	e, _ := NewEngine(Options{})
	for _, o := range objs {
		e.Upsert(o)
	}
	find := func(kind, ns, name string) int {
		for i, o := range objs {
			if o.GetKind() == kind && o.GetNamespace() == ns && o.GetName() == name {
				return i
			}
		}
		t.Fatalf("no %s %s/%s", kind, ns, name)
		return -1
	}
	edits := []struct {
		name string
		edit func()
	}{
		{"initial", func() {}},
		{"gateway policy value", func() {
			i := find("RetryPolicy", "ns-1", "pol-1")
			p := objs[i].DeepCopy()
			_ = unstructured.SetNestedField(p.Object, int64(42), "spec", "attempts")
			objs[i] = p
			e.Upsert(p)
		}},
		{"route parents", func() {
			i := find("HTTPRoute", "ns-0", "route-1")
			r := objs[i].DeepCopy()
			_ = unstructured.SetNestedSlice(r.Object, []interface{}{map[string]interface{}{"name": "gw-1"}}, "spec", "parentRefs")
			objs[i] = r
			e.Upsert(r)
		}},
		{"memo dropped", func() { e.DropMemo() }},
		{"gateway policy value after structural edit", func() {
			i := find("RetryPolicy", "ns-1", "pol-1")
			p := objs[i].DeepCopy()
			_ = unstructured.SetNestedField(p.Object, int64(7), "spec", "attempts")
			objs[i] = p
			e.Upsert(p)
		}},
	}
	for _, ed := range edits {
		ed.edit()
		keys, want := computeKeyByKey(objs)
		got := computeConcurrently(e, keys, 4)
		for w, m := range got {
			if len(m) != len(want) {
				t.Errorf("%s: worker %d computed %d keys, want %d", ed.name, w, len(m), len(want))
			}
			for k, v := range want {
				if m[k] != v {
					t.Errorf("%s: worker %d, %v:\n got %s\nwant %s", ed.name, w, k, m[k], v)
				}
			}
		}
	}
}

// computeKeyByKey is what a fresh engine fed objs computes: its keys, and the JSON of each key's
// output.
func computeKeyByKey(objs []*unstructured.Unstructured) ([]Key, map[Key]string) {
	ref, _ := NewEngine(Options{})
	for _, o := range objs {
		ref.Upsert(o)
	}
	keys := ref.Keys()
	want := map[Key]string{}
	for _, k := range keys {
		o, _ := ref.Compute(k)
		b, _ := json.Marshal(o)
		want[k] = string(b)
	}
	return keys, want
}

// computeConcurrently has workers goroutines compute keys through e at once, each in its own
// shuffled order so that they race for the same contexts and folds, and returns the JSON of the
// outputs each worker got.
func computeConcurrently(e *Engine, keys []Key, workers int) []map[Key]string {
	got := make([]map[Key]string, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			order := append([]Key(nil), keys...)
			rand.New(rand.NewSource(int64(w))).Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			m := map[Key]string{}
			for _, k := range order {
				o, ok := e.Compute(k)
				if !ok {
					continue
				}
				b, _ := json.Marshal(o)
				m[k] = string(b)
			}
			got[w] = m
		}()
	}
	wg.Wait()
	return got
}

// TestMemoAfterDropStartsSmall: the memo an edit rebuilds after DropMemo is
// not sized for a computation of every key (it held ~100 MB of empty
// buckets at the large benchmark size (scale 1)).
func TestMemoAfterDropStartsSmall(t *testing.T) {
	topo, pols := genTopology(genSpec{namespaces: 20, gatewaysPerNS: 2, routesPerGW: 20, servicesPerNS: 10, policies: 200})
	e, _ := NewEngine(Options{})
	for _, o := range append(topo, pols...) {
		e.Upsert(o)
	}
	keys := e.Keys()
	allocs := func(f func()) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	full := allocs(func() { e.Compute(keys[0]) }) // builds a memo sized for every key
	e.DropMemo()
	afterDrop := allocs(func() { e.Compute(keys[0]) })
	if afterDrop*4 > full {
		t.Errorf("first Compute after DropMemo allocated %d bytes, the first one ever %d: the memo is still sized for every key", afterDrop, full)
	}
	if _, ok := e.Compute(keys[0]); !ok {
		t.Error("no output after DropMemo")
	}
}

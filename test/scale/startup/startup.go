// Package startup is the server's start-up computation as the benchmarks
// run it on a generated topology: a fresh engine fed in bulk mode, then
// every key computed in parallel. It stands apart from package scale, whose
// generator pkg/compute's own tests use.
package startup

import (
	"runtime"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// BulkEngine returns a fresh engine fed objs the way the server feeds its
// informers' initial lists: in bulk mode (no affected-key bookkeeping per
// Upsert), ended before the first computation.
func BulkEngine(objs []*unstructured.Unstructured) (*compute.Engine, error) {
	e, err := compute.NewEngine(compute.Options{})
	if err != nil {
		return nil, err
	}
	e.SetBulk(true)
	for _, o := range objs {
		e.Upsert(o)
	}
	e.SetBulk(false)
	return e, nil
}

// ComputeParallel computes every key on GOMAXPROCS goroutines sharing the
// engine's memo, as the server's first full computation does, and calls
// each once per key with its index and output (ok false: none), from those
// goroutines, concurrently.
func ComputeParallel(e *compute.Engine, keys []compute.Key, each func(i int, obj kruntime.Object, ok bool)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < len(keys); i = int(next.Add(1)) - 1 {
				o, ok := e.Compute(keys[i])
				each(i, o, ok)
			}
		}()
	}
	wg.Wait()
}

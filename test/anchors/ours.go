package anchors

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// ComputeOurs computes every effective policy with this project's engine
// the way test/scale's BenchmarkFullComputation does, which is what the
// server does at start-up: a fresh engine fed every object in bulk mode,
// then every key computed by GOMAXPROCS goroutines sharing its memo. The
// outputs are kept (a server stores them), indexed like Keys().
func ComputeOurs(objs []*unstructured.Unstructured) ([]compute.Key, []kruntime.Object, error) {
	e, err := compute.NewEngine(compute.Options{})
	if err != nil {
		return nil, nil, err
	}
	e.SetBulk(true)
	for _, o := range objs {
		e.Upsert(o)
	}
	e.SetBulk(false)
	keys := e.Keys()
	outs := make([]kruntime.Object, len(keys))
	var next, missing atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < len(keys); i = int(next.Add(1)) - 1 {
				o, ok := e.Compute(keys[i])
				if !ok {
					missing.Add(1)
				}
				outs[i] = o
			}
		}()
	}
	wg.Wait()
	if n := missing.Load(); n > 0 {
		return keys, outs, fmt.Errorf("%d of %d keys computed no output", n, len(keys))
	}
	return keys, outs, nil
}

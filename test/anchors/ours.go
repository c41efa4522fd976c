package anchors

import (
	"fmt"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/startup"
)

// ComputeOurs computes every effective policy with this project's engine
// the way test/scale's BenchmarkFullComputation does, which is what the
// server does at start-up: a fresh engine fed every object in bulk mode,
// then every key computed by GOMAXPROCS goroutines sharing its memo. The
// outputs are kept (a server stores them), indexed like Keys().
func ComputeOurs(objs []*unstructured.Unstructured) ([]compute.Key, []kruntime.Object, error) {
	e, err := startup.BulkEngine(objs)
	if err != nil {
		return nil, nil, err
	}
	keys := e.Keys()
	outs := make([]kruntime.Object, len(keys))
	var missing atomic.Int64
	startup.ComputeParallel(e, keys, func(i int, o kruntime.Object, ok bool) {
		if !ok {
			missing.Add(1)
		}
		outs[i] = o
	})
	if n := missing.Load(); n > 0 {
		return keys, outs, fmt.Errorf("%d of %d keys computed no output", n, len(keys))
	}
	return keys, outs, nil
}

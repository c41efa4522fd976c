package scale

import (
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"

	kruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/benchkit"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/startup"
)

// BenchmarkGrowth: the server's start-up computation at -scale, in the shape
// the server keeps its results: a fresh engine fed every object in bulk
// mode, every key computed on GOMAXPROCS goroutines sharing the memo, each
// output encoded (pkg/encoded, as the live layer stores it), then the memo
// dropped. hack/bench-growth.sh runs it at several scales, each in its own
// process, and fits how time and memory grow.
//
// Memory is the Go heap (objects allocated and not yet freed, garbage
// included, sampled every few milliseconds; runtime/metrics) and the live
// heap (as each garbage collection marks it), reported with the generator's
// input objects subtracted: a server holds its engine's own
// model, never the unstructured objects the generator builds (its informers
// keep key stubs), so they are a cost of the harness.
//
//	go test -run '^$' -bench '^BenchmarkGrowth$' -benchtime 1x ./test/scale -args -scale=0.25
func BenchmarkGrowth(b *testing.B) {
	objs := Generate(benchOptions())
	inputs := benchkit.HeapAfterGC()
	// The server computes its start-up with the garbage collector's target
	// at 50 % (pkg/live, startupGCPercent), not Go's default 100 %.
	defer debug.SetGCPercent(debug.SetGCPercent(50))
	for i := 0; i < b.N; i++ {
		sampler := benchkit.StartHeapSampler(2 * time.Millisecond)
		start, cpu0 := time.Now(), benchkit.CPUTime()
		e, err := startup.BulkEngine(objs)
		if err != nil {
			b.Fatal(err)
		}
		keys := e.Keys()
		outs := make([]*encoded.Object, len(keys))
		var failed atomic.Int64
		startup.ComputeParallel(e, keys, func(j int, o kruntime.Object, ok bool) {
			if !ok {
				failed.Add(1)
				return
			}
			enc, err := encoded.New(o)
			if err != nil {
				failed.Add(1)
				return
			}
			outs[j] = enc
		})
		e.DropMemo()
		wall, cpu := time.Since(start), benchkit.CPUTime()-cpu0
		peak, peakLive := sampler.Stop()
		if n := failed.Load(); n > 0 {
			b.Fatalf("%d of %d keys computed no output", n, len(keys))
		}
		kept := benchkit.HeapAfterGC()
		mb := func(v uint64) float64 { return float64(v) / (1 << 20) }
		b.ReportMetric(wall.Seconds(), "wall-s")
		b.ReportMetric(cpu.Seconds(), "cpu-s")
		b.ReportMetric(float64(len(keys)), "keys")
		b.ReportMetric(float64(len(objs)), "objects")
		b.ReportMetric(mb(inputs), "input-MB")
		b.ReportMetric(mb(sub(peak, inputs)), "peak-heap-MB")
		b.ReportMetric(mb(sub(peakLive, inputs)), "peak-live-heap-MB")
		b.ReportMetric(mb(sub(kept, inputs)), "kept-heap-MB")
		if rss := benchkit.ProcStatus("VmHWM:"); rss > 0 {
			b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MB")
		}
		runtime.KeepAlive(outs)
		runtime.KeepAlive(e)
	}
	runtime.KeepAlive(objs)
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

package scale

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
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
	inputs := heapAfterGC()
	// The server computes its start-up with the garbage collector's target
	// at 50 % (pkg/live, startupGCPercent), not Go's default 100 %.
	defer debug.SetGCPercent(debug.SetGCPercent(50))
	for i := 0; i < b.N; i++ {
		sampler := startHeapSampler(2 * time.Millisecond)
		start, cpu0 := time.Now(), cpuTime()
		e, err := compute.NewEngine(compute.Options{})
		if err != nil {
			b.Fatal(err)
		}
		e.SetBulk(true)
		for _, o := range objs {
			e.Upsert(o)
		}
		e.SetBulk(false)
		keys := e.Keys()
		outs := make([]*encoded.Object, len(keys))
		var next atomic.Int64
		var failed atomic.Int64
		var wg sync.WaitGroup
		for w := 0; w < runtime.GOMAXPROCS(0); w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := int(next.Add(1)) - 1; j < len(keys); j = int(next.Add(1)) - 1 {
					o, ok := e.Compute(keys[j])
					if !ok {
						failed.Add(1)
						continue
					}
					enc, err := encoded.New(o)
					if err != nil {
						failed.Add(1)
						continue
					}
					outs[j] = enc
				}
			}()
		}
		wg.Wait()
		e.DropMemo()
		wall, cpu := time.Since(start), cpuTime()-cpu0
		peak, peakLive := sampler.stop()
		if n := failed.Load(); n > 0 {
			b.Fatalf("%d of %d keys computed no output", n, len(keys))
		}
		kept := heapAfterGC()
		mb := func(v uint64) float64 { return float64(v) / (1 << 20) }
		b.ReportMetric(wall.Seconds(), "wall-s")
		b.ReportMetric(cpu.Seconds(), "cpu-s")
		b.ReportMetric(float64(len(keys)), "keys")
		b.ReportMetric(float64(len(objs)), "objects")
		b.ReportMetric(mb(inputs), "input-MB")
		b.ReportMetric(mb(sub(peak, inputs)), "peak-heap-MB")
		b.ReportMetric(mb(sub(peakLive, inputs)), "peak-live-heap-MB")
		b.ReportMetric(mb(sub(kept, inputs)), "kept-heap-MB")
		if rss := procStatus("VmHWM:"); rss > 0 {
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

// heapSampler records the largest Go heap (objects allocated and not yet
// swept: live data and garbage) and the largest live heap (as the last
// garbage collection marked it) seen between its start and stop.
type heapSampler struct {
	done chan struct{}
	max  chan [2]uint64
}

func startHeapSampler(every time.Duration) *heapSampler {
	s := &heapSampler{done: make(chan struct{}), max: make(chan [2]uint64, 1)}
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
		var peak [2]uint64
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			metrics.Read(sample)
			peak[0] = max(peak[0], sample[0].Value.Uint64())
			peak[1] = max(peak[1], sample[1].Value.Uint64())
			select {
			case <-s.done:
				s.max <- peak
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// stop returns the peak heap and the peak live heap.
func (s *heapSampler) stop() (heap, live uint64) {
	close(s.done)
	p := <-s.max
	return p[0], p[1]
}

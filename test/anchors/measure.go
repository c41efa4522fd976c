package anchors

import (
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The measurements follow test/scale's BenchmarkGrowth
// (growth_bench_test.go): wall time, CPU time of the process (getrusage:
// all threads, the garbage collector's included, so that on a shared
// machine it says how much work a run was where wall time also counts
// waiting for a core), and the Go heap sampled every 2 ms.

// CPUTime is the CPU time (user + system) of the process so far.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// HeapAfterGC is the live heap after two collections (the second frees what
// finalizers of the first kept).
func HeapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// PeakRSS is the process's high-water resident set (VmHWM), in bytes.
func PeakRSS() uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// HeapSampler records the largest Go heap (objects allocated and not yet
// freed, garbage included; runtime/metrics) between its start and Stop.
type HeapSampler struct {
	done chan struct{}
	max  chan uint64
}

// StartHeapSampler samples the heap every interval until Stop.
func StartHeapSampler(every time.Duration) *HeapSampler {
	s := &HeapSampler{done: make(chan struct{}), max: make(chan uint64, 1)}
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
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

// Stop ends the sampling and returns the peak.
func (s *HeapSampler) Stop() uint64 {
	close(s.done)
	return <-s.max
}

// Span measures one timed section: Start, then End.
type Span struct {
	start time.Time
	cpu0  time.Duration
}

// StartSpan starts measuring.
func StartSpan() Span { return Span{start: time.Now(), cpu0: CPUTime()} }

// End returns the wall and CPU seconds since StartSpan.
func (s Span) End() (wall, cpu float64) {
	return time.Since(s.start).Seconds(), (CPUTime() - s.cpu0).Seconds()
}

// Package benchkit holds what the benchmark harnesses of this repository
// share: the process's CPU time, heap and peak resident set, a heap sampler,
// and the ordered key=value flag their reports describe the machine with.
package benchkit

import (
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// CPUTime is the CPU time (user + system) of the process so far, all
// threads (the garbage collector's included): on a shared machine it says
// how much work was done, where wall time also counts waiting for a core.
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

// ProcStatus returns a memory field of /proc/self/status in bytes (VmHWM:
// the high-water resident set; VmRSS: the current one); 0 when unknown.
func ProcStatus(field string) uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// HeapSampler records, between its start and Stop, the largest Go heap
// (objects allocated and not yet swept: live data and garbage) and the
// largest live heap (as the last garbage collection marked it).
type HeapSampler struct {
	done chan struct{}
	max  chan [2]uint64
}

// StartHeapSampler samples every interval until Stop.
func StartHeapSampler(every time.Duration) *HeapSampler {
	s := &HeapSampler{done: make(chan struct{}), max: make(chan [2]uint64, 1)}
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

// Stop ends the sampling and returns the peak heap and the peak live heap.
func (s *HeapSampler) Stop() (heap, live uint64) {
	close(s.done)
	p := <-s.max
	return p[0], p[1]
}

// KV is a repeatable key=value flag that keeps the order it was given in
// (a report lists the machine's description as written).
type KV struct{ Keys, Vals []string }

// String implements flag.Value.
func (k *KV) String() string { return strings.Join(k.Keys, ",") }

// Set implements flag.Value.
func (k *KV) Set(s string) error {
	key, val, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("want key=value, got %q", s)
	}
	k.Keys = append(k.Keys, key)
	k.Vals = append(k.Vals, val)
	return nil
}

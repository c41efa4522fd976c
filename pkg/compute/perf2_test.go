package compute

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestPerfIncremental(t *testing.T) {
	if os.Getenv("EP_PERF") == "" {
		t.Skip()
	}
	topo, pols := genTopology(benchSizes[1].g)
	e, _ := NewEngine(Options{})
	start := time.Now()
	c := cpuTime()
	for _, o := range append(append([]*unstructured.Unstructured{}, topo...), pols...) {
		e.Upsert(o)
	}
	fmt.Println("feed", time.Since(start), "cpu", cpuTime()-c)
	var target *unstructured.Unstructured
	for _, p := range pols {
		if p.GetName() == "pol-9" {
			target = p.DeepCopy()
		}
	}
	for i := 0; i < 3; i++ {
		_ = unstructured.SetNestedField(target.Object, int64(100+i), "spec", "attempts")
		t0 := time.Now()
		c0 := cpuTime()
		ks := e.Upsert(target.DeepCopy())
		t1 := time.Now()
		var slow []string
		for _, k := range ks {
			t2 := time.Now()
			e.Compute(k)
			if d := time.Since(t2); d > 5*time.Millisecond {
				slow = append(slow, fmt.Sprint(k, d))
			}
		}
		fmt.Println("upsert", t1.Sub(t0), "keys", len(ks), "compute", time.Since(t1), "cpu total", cpuTime()-c0, len(slow), "slow")
	}
}

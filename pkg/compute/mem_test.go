package compute

import (
	"fmt"
	"os"
	"runtime"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func heapMB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

func TestPerfMemory(t *testing.T) {
	if os.Getenv("EP_PERF") == "" {
		t.Skip("set EP_PERF=1 to run")
	}
	topo, pols := genTopology(benchSizes[1].g)
	base := heapMB()
	e, _ := NewEngine(Options{})
	for _, o := range append(append([]*unstructured.Unstructured{}, topo...), pols...) {
		e.Upsert(o)
	}
	fed := heapMB()
	for _, k := range e.Keys() {
		e.Compute(k)
	}
	computed := heapMB()
	fmt.Printf("inputs %.0f MB; engine state %.0f MB; + cached memo %.0f MB\n", base, fed-base, computed-fed)
	runtime.KeepAlive(e)
	runtime.KeepAlive(topo)
}

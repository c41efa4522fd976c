package benchkit

import (
	"runtime"
	"slices"
	"testing"
	"time"
)

func TestKV(t *testing.T) {
	var k KV
	for _, s := range []string{"b=2", "a=1=x", "c="} {
		if err := k.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(k.Keys, []string{"b", "a", "c"}) || !slices.Equal(k.Vals, []string{"2", "1=x", ""}) {
		t.Errorf("keys %v vals %v", k.Keys, k.Vals)
	}
	if err := k.Set("novalue"); err == nil {
		t.Error("a flag without = was taken")
	}
}

func TestHeapSamplerSeesAnAllocation(t *testing.T) {
	s := StartHeapSampler(time.Millisecond)
	block := make([]byte, 64<<20)
	for i := range block {
		block[i] = 1
	}
	time.Sleep(20 * time.Millisecond)
	heap, _ := s.Stop()
	if heap < 64<<20 {
		t.Errorf("peak heap %d, below the 64 MiB held", heap)
	}
	runtime.KeepAlive(block)
}

func TestProcStatus(t *testing.T) {
	if ProcStatus("VmHWM:") == 0 || ProcStatus("NoSuchField:") != 0 {
		t.Error("VmHWM unknown, or an unknown field known")
	}
}

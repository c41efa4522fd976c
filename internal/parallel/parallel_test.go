package parallel

import (
	"runtime"
	"sync/atomic"
	"testing"
)

func TestFor(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, n := range []int{0, 1, 3, 1000} {
		calls := make([]atomic.Int32, n)
		For(n, func(i int) { calls[i].Add(1) })
		for i := range calls {
			if c := calls[i].Load(); c != 1 {
				t.Fatalf("n=%d: f(%d) called %d times, want once", n, i, c)
			}
		}
	}
}

// Package parallel runs independent pieces of work on every core.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// For calls f(0) ... f(n-1) on up to GOMAXPROCS goroutines, each taking the
// next index when done with one (pieces of work vary in cost), and returns
// when all calls have returned. f must be safe for concurrent use and
// recover its own panics.
func For(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	wg.Add(workers)
	for w := 0; w < workers; w++ {
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
}

package anchors

import (
	"time"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/benchkit"
)

// The measurements are test/scale's (package benchkit, as BenchmarkGrowth
// takes them): wall time, CPU time of the process (getrusage: all threads,
// the garbage collector's included, so that on a shared machine it says how
// much work a run was where wall time also counts waiting for a core), and
// the Go heap sampled every 2 ms.

// Span measures one timed section: Start, then End.
type Span struct {
	start time.Time
	cpu0  time.Duration
}

// StartSpan starts measuring.
func StartSpan() Span { return Span{start: time.Now(), cpu0: benchkit.CPUTime()} }

// End returns the wall and CPU seconds since StartSpan.
func (s Span) End() (wall, cpu float64) {
	return time.Since(s.start).Seconds(), (benchkit.CPUTime() - s.cpu0).Seconds()
}

package measure

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/report"
)

// GetLatency times n single GETs of names drawn with seed (path makes each
// one's path) on conc workers, after unmeasured warm-up requests.
func GetLatency(ctx context.Context, rc rest.Interface, names []string, path func(string) string, n, conc int, seed uint64) (report.Latency, error) {
	if len(names) == 0 {
		return report.Latency{}, fmt.Errorf("no objects to GET")
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	sample := make([]string, n+200)
	for i := range sample {
		sample[i] = names[rng.IntN(len(names))]
	}
	run := func(keys []string) ([]time.Duration, int64, int64, time.Duration) {
		var next, errs, bytesTotal atomic.Int64
		lat := make([]time.Duration, len(keys))
		var wg sync.WaitGroup
		t0 := time.Now()
		for w := 0; w < conc; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1)) - 1
					if i >= len(keys) {
						return
					}
					s := time.Now()
					body, err := rc.Get().AbsPath(path(keys[i])).SetHeader("Accept", "application/json").DoRaw(ctx)
					lat[i] = time.Since(s)
					if err != nil {
						errs.Add(1)
					}
					bytesTotal.Add(int64(len(body)))
				}
			}()
		}
		wg.Wait()
		return lat, errs.Load(), bytesTotal.Load(), time.Since(t0)
	}
	run(sample[:200]) // warm-up: connections, caches; not counted
	lat, errs, b, wall := run(sample[200:])
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return report.Latency{
		Requests: len(lat), Concurrency: conc, Errors: errs,
		P50Ms: ms(Pct(lat, 0.50)), P90Ms: ms(Pct(lat, 0.90)), P99Ms: ms(Pct(lat, 0.99)), MaxMs: ms(lat[len(lat)-1]),
		MeanMs: ms(sum / time.Duration(len(lat))), PerSecond: float64(len(lat)) / wall.Seconds(),
		AvgBytes: float64(b) / float64(len(lat)),
	}, nil
}

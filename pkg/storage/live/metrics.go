package live

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

const subsystem = "effectivepolicy"

var (
	cacheDegraded = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem:      subsystem,
		Name:           "cache_degraded",
		Help:           "1 when the bbolt output cache is disabled, unavailable or failing to write (outputs are served from memory), else 0.",
		StabilityLevel: metrics.ALPHA,
	})
	cacheWriteFailures = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "cache_write_failures_total",
		Help:           "Failed opens of and writes to the bbolt output cache.",
		StabilityLevel: metrics.ALPHA,
	})
	cacheDiscarded = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "cache_discarded_total",
		Help:           "Cache files found corrupt, foreign or incompatible at start-up and rebuilt.",
		StabilityLevel: metrics.ALPHA,
	})
	recomputed = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "recomputed_keys_total",
		Help:           "Output keys recomputed.",
		StabilityLevel: metrics.ALPHA,
	})
	computePanics = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "compute_panics_total",
		Help:           "Computations that panicked (the previous output was kept).",
		StabilityLevel: metrics.ALPHA,
	})
	applyDuration = metrics.NewHistogram(&metrics.HistogramOpts{
		Subsystem:      subsystem,
		Name:           "recompute_batch_duration_seconds",
		Help:           "Time to recompute and apply one batch of dirty keys.",
		Buckets:        metrics.ExponentialBuckets(0.0005, 4, 9),
		StabilityLevel: metrics.ALPHA,
	})
)

var registerOnce sync.Once

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(cacheDegraded, cacheWriteFailures, cacheDiscarded, recomputed, computePanics, applyDuration)
	})
}

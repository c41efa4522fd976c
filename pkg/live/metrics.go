package live

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/inputs"
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
	readWait = metrics.NewHistogram(&metrics.HistogramOpts{
		Subsystem:      subsystem,
		Name:           "read_wait_seconds",
		Help:           "Time a GET or LIST waited for the worker to apply the changes pending when it arrived (only reads that had to wait).",
		Buckets:        metrics.ExponentialBuckets(0.0005, 4, 9),
		StabilityLevel: metrics.ALPHA,
	})
	reviewDuration = metrics.NewHistogram(&metrics.HistogramOpts{
		Subsystem:      subsystem,
		Name:           "review_duration_seconds",
		Help:           "Time an EffectivePolicyReview held the engine (live edits wait that long).",
		Buckets:        metrics.ExponentialBuckets(0.0005, 4, 9),
		StabilityLevel: metrics.ALPHA,
	})
)

var registerOnce sync.Once

func registerMetrics() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(readWait, cacheDegraded, cacheWriteFailures, cacheDiscarded, recomputed, computePanics, applyDuration, reviewDuration)
		legacyregistry.MustRegister(dirtyKeys, cacheWrites, cacheSize, informerSynced)
		legacyregistry.MustRegister(policySources, policiesKnown, policiesReachingNothing)
	})
}

// Metrics of the live layer's queue and cache. The call sites: dirtyKeys
// where the dirty set changes (dirty.go), cacheWrites and cacheSize after
// each successful bbolt write batch (and cacheSize when the file is opened;
// cachefile.go), informerSynced from reportInformers.
var (
	dirtyKeys = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem:      subsystem,
		Name:           "dirty_keys",
		Help:           "Output keys waiting to be recomputed (the dirty queue).",
		StabilityLevel: metrics.ALPHA,
	})
	cacheWrites = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "cache_writes_total",
		Help:           "Successful write batches to the bbolt output cache.",
		StabilityLevel: metrics.ALPHA,
	})
	cacheSize = metrics.NewGauge(&metrics.GaugeOpts{
		Subsystem:      subsystem,
		Name:           "cache_size_bytes",
		Help:           "Size of the bbolt output cache file, after the last successful write batch.",
		StabilityLevel: metrics.ALPHA,
	})
	informerSynced = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      subsystem,
		Name:           "informer_synced",
		Help:           "1 when the input informer of the resource (resource.group) has delivered its initial list, else 0. Informers stopped (their CRD is gone) drop out.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"resource"})
)

// informerReportInterval is how often reportInformers refreshes
// effectivepolicy_informer_synced.
var informerReportInterval = time.Second

// reportInformers sets effectivepolicy_informer_synced{resource} for every
// running input informer of m every interval until ctx is done, and removes
// the series of informers that stopped (all of them when ctx is done).
func reportInformers(ctx context.Context, m *inputs.Manager, interval time.Duration) {
	reported := map[string]bool{}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		pending := map[string]bool{} // by GroupVersionResource.String()
		for _, r := range m.Pending() {
			pending[r] = true
		}
		running := map[string]bool{} // by label: GroupResource.String(), e.g. httproutes.gateway.networking.k8s.io
		for _, gvr := range append([]schema.GroupVersionResource{inputs.CRDResource, inputs.NamespaceResource, inputs.ServiceResource}, m.Running()...) {
			r := gvr.GroupResource().String()
			running[r] = true
			v := 1.0
			if pending[gvr.String()] {
				v = 0
			}
			informerSynced.WithLabelValues(r).Set(v)
		}
		for r := range reported {
			if !running[r] {
				informerSynced.DeleteLabelValues(r)
			}
		}
		reported = running
		select {
		case <-ctx.Done():
			for r := range reported { // the informers stop with ctx
				informerSynced.DeleteLabelValues(r)
			}
			return
		case <-t.C:
		}
	}
}

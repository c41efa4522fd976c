package live

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/inputs"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/cache"
)

func gauge(t *testing.T, m metrics.GaugeMetric) float64 {
	t.Helper()
	v, err := testutil.GetGaugeMetricValue(m)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func counter(t *testing.T, m metrics.CounterMetric) float64 {
	t.Helper()
	v, err := testutil.GetCounterMetricValue(m)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// informerSeries returns effectivepolicy_informer_synced by resource label,
// as gathered from the legacy registry (the series /metrics shows).
func informerSeries(t *testing.T) map[string]float64 {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "effectivepolicy_informer_synced" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "resource" {
					out[l.GetValue()] = m.GetGauge().GetValue()
				}
			}
		}
	}
	return out
}

// TestMetrics: effectivepolicy_dirty_keys follows the dirty set,
// effectivepolicy_cache_writes_total and effectivepolicy_cache_size_bytes
// follow each successful write batch, and effectivepolicy_informer_synced has
// one series per running informer, gone when the informer stops.
func TestMetrics(t *testing.T) {
	defer func(d time.Duration) { informerReportInterval = d }(informerReportInterval)
	informerReportInterval = 5 * time.Millisecond

	dir := t.TempDir()
	// A debounce of nearly a minute: keys stay dirty until a read makes the
	// worker flush them.
	h := newHarness(t, dir, 59*time.Second, crd("example.com", "RetryPolicy", "retrypolicies", true))
	file := filepath.Join(dir, cache.FileName)
	if fi, err := os.Stat(file); err != nil {
		entries, _ := os.ReadDir(dir)
		t.Fatalf("cache file: %v (dir has %v)", err, entries)
	} else if got := gauge(t, cacheSize); got != float64(fi.Size()) {
		t.Errorf("cache_size_bytes after open = %v, want the file size %d", got, fi.Size())
	}
	h.start()
	h.watching("retrypolicies", 1)

	h.eventually("informer_synced series", func() bool {
		s := informerSeries(t)
		return len(s) == 4 && s["retrypolicies.example.com"] == 1 && s["customresourcedefinitions.apiextensions.k8s.io"] == 1 &&
			s["namespaces"] == 1 && s["services"] == 1
	})

	writes := counter(t, cacheWrites)
	h.create(retryGVR, policy("default", "p1", "r", "1"))
	h.create(retryGVR, policy("default", "p2", "s", "2"))
	h.eventually("engine saw p1 and p2", func() bool { return len(h.engine.Keys()) == 2 })
	// The engine holds the keys just before the live layer marks them dirty.
	h.eventually("dirty_keys = 2", func() bool { return gauge(t, dirtyKeys) == 2 })
	if got := counter(t, cacheWrites); got != writes {
		t.Errorf("cache_writes_total moved from %v to %v without a write", writes, got)
	}

	if _, err := h.live.EffectivePolicies().Get(context.Background(), "default", "r"); err != nil {
		t.Fatal(err)
	}
	// A read waits for every pending change, not just its own key.
	if got := gauge(t, dirtyKeys); got != 0 {
		t.Errorf("dirty_keys after Get = %v, want 0", got)
	}
	if got := counter(t, cacheWrites); got != writes+1 {
		t.Errorf("cache_writes_total = %v, want %v", got, writes+1)
	}
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := gauge(t, cacheSize); got != float64(fi.Size()) || got == 0 {
		t.Errorf("cache_size_bytes = %v, want the file size %d", got, fi.Size())
	}

	h.create(retryGVR, policy("default", "p3", "u", "3"))
	h.eventually("dirty_keys = 1", func() bool { return gauge(t, dirtyKeys) == 1 })
	if _, _, err := h.live.EffectivePolicies().List(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if got := gauge(t, dirtyKeys); got != 0 {
		t.Errorf("dirty_keys after List = %v, want 0", got)
	}
	if got := counter(t, cacheWrites); got != writes+2 {
		t.Errorf("cache_writes_total = %v, want %v", got, writes+2)
	}

	// The policy CRD goes away: its informer stops and its series goes.
	h.delete(inputs.CRDResource, "", "retrypolicies.example.com")
	h.eventually("retrypolicies series removed", func() bool {
		_, ok := informerSeries(t)["retrypolicies.example.com"]
		return !ok
	})
}

package live

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/cache"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/resourceversion"
)

// cacheCheckAt runs CacheCheck as the healthz handler does for path.
func cacheCheckAt(l *Live, path string) error {
	return l.CacheCheck().Check(httptest.NewRequest(http.MethodGet, path, nil))
}

// unusableCacheDir is a way to make the cache directory unusable.
type unusableCacheDir struct {
	name string
	// breakDir makes dir unusable and returns what makes it usable again.
	breakDir func(t *testing.T, dir string) (fix func())
}

func unusableCacheDirs() []unusableCacheDir {
	return []unusableCacheDir{
		{"a file where the directory is expected", func(t *testing.T, dir string) func() {
			if err := os.WriteFile(dir, []byte("not a directory"), 0o600); err != nil {
				t.Fatal(err)
			}
			return func() {
				if err := os.Remove(dir); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"the file locked by another process, holding another history", func(t *testing.T, dir string) func() {
			other, _, _, err := cache.Open(dir, encoded.CacheFormat, cacheResources, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := other.Write(cache.Batch{ResourceEffectivePolicies: {
				Entries:         []cache.Entry{{Key: "stale/x", Data: []byte(`{"metadata":{"name":"x","namespace":"stale","resourceVersion":"1"}}`)}},
				ResourceVersion: resourceversion.Make(other.Epoch(), 1),
			}}, false); err != nil {
				t.Fatal(err)
			}
			return func() { _ = other.Close() }
		}},
	}
}

// A cache directory unusable at start is retried with back-off: once it
// becomes usable, the file is adopted for the history the server already
// serves (its epoch and resourceVersions), later changes are written to it,
// and a restart restores exactly what was served. Meanwhile the server serves
// from memory, /readyz passes and /readyz/effectivepolicy-cache reports why.
func TestCacheUnusableAtStartIsRetried(t *testing.T) {
	oldInitial, oldMax := cacheRetryInitial, cacheRetryMax
	cacheRetryInitial, cacheRetryMax = 10*time.Millisecond, 50*time.Millisecond
	t.Cleanup(func() { cacheRetryInitial, cacheRetryMax = oldInitial, oldMax })

	for _, tc := range unusableCacheDirs() {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cache")
			fix := tc.breakDir(t, dir)
			h := newHarness(t, dir, time.Millisecond, crd("example.com", "RetryPolicy", "retrypolicies", true), policy("default", "p1", "r", "1"))
			if h.live.CacheError() == nil {
				t.Fatal("no cache error reported for an unusable directory")
			}
			h.start()
			ctx := context.Background()
			b := h.live.EffectivePolicies()
			if _, err := b.Get(ctx, "default", "r"); err != nil {
				t.Fatalf("not serving from memory: %v", err)
			}
			if err := cacheCheckAt(h.live, "/readyz"); err != nil {
				t.Errorf("/readyz must pass while degraded: %v", err)
			}
			if err := cacheCheckAt(h.live, "/readyz/"+CacheCheckName); err == nil {
				t.Error("/readyz/effectivepolicy-cache passes while the cache is unusable")
			}
			epoch := h.live.stores.namespaced.Epoch()

			fix()
			h.eventually("the cache adopted", func() bool { return h.live.CacheError() == nil })
			if err := cacheCheckAt(h.live, "/readyz/"+CacheCheckName); err != nil {
				t.Errorf("/readyz/effectivepolicy-cache after recovery: %v", err)
			}
			if e := h.live.stores.namespaced.Epoch(); e != epoch {
				t.Fatalf("adopting the cache changed the served epoch %d -> %d", epoch, e)
			}
			h.watching("retrypolicies", 1)
			h.create(retryGVR, policy("default", "p2", "s", "2"))
			h.eventually("s served", func() bool { _, err := b.Get(ctx, "default", "s"); return err == nil })
			want, wantRV := snapshotJSON(t, b)
			h.stop()

			h2 := newHarness(t, dir, time.Millisecond)
			if err := h2.live.CacheError(); err != nil {
				t.Fatalf("restart on the adopted cache: %v", err)
			}
			got, rv := snapshotJSON(t, h2.live.EffectivePolicies())
			if got != want || rv != wantRV {
				t.Errorf("restart restores\n%s @%d\nwant what was served\n%s @%d", got, rv, want, wantRV)
			}
			if e := h2.live.stores.namespaced.Epoch(); e != epoch {
				t.Errorf("restored epoch %d, want the served history's %d", e, epoch)
			}
		})
	}
}

// A cache that works needs no retry, and the check passes everywhere.
func TestCacheCheckHealthy(t *testing.T) {
	h := newHarness(t, t.TempDir(), time.Millisecond, crd("example.com", "RetryPolicy", "retrypolicies", true))
	h.start()
	for _, path := range []string{"/readyz", "/readyz/" + CacheCheckName, "/readyz?verbose"} {
		if err := cacheCheckAt(h.live, path); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}

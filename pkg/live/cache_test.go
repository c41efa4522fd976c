package live

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/cache"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/resourceversion"
)

func TestRestartServesCachedObjects(t *testing.T) {
	dir := t.TempDir()
	objs := []runtime.Object{
		crd("example.com", "RetryPolicy", "retrypolicies", true),
		policy("default", "p1", "r", "1"),
		policy("default", "p2", "s", "2"),
		policy("other", "p3", "t", "3"),
	}
	h1 := newHarness(t, dir, time.Millisecond, objs...)
	h1.start()
	h1.watching("retrypolicies", 1)
	h1.create(retryGVR, policy("default", "p4", "r", "4")) // a second resourceVersion
	h1.eventually("p4", func() bool {
		o, err := h1.live.EffectivePolicies().Get(context.Background(), "default", "r")
		return err == nil && describe(watch.Event{Object: o}).msg == "p1=1;p4=4;"
	})
	before, rvBefore := snapshotJSON(t, h1.live.EffectivePolicies())
	epoch := h1.live.stores.namespaced.Epoch()
	h1.stop()
	if resourceversion.CounterOf(rvBefore) < 2 || resourceversion.EpochOf(rvBefore) != epoch {
		t.Fatalf("resourceVersion %d, want at least 2", rvBefore)
	}

	// While the server was down, p2 was deleted; p4 is still there.
	h2 := newHarness(t, dir, time.Millisecond, objs[0], objs[1], objs[3], policy("default", "p4", "r", "4"))
	after, rvAfter := snapshotJSON(t, h2.live.EffectivePolicies())
	if after != before || rvAfter != rvBefore {
		t.Fatalf("before recomputation the restarted server serves\n%s @%d\nwant\n%s @%d", after, rvAfter, before, rvBefore)
	}
	if e, ce := h2.live.stores.namespaced.Epoch(), h2.live.stores.cluster.Epoch(); e != epoch || ce != epoch {
		t.Fatalf("epochs after restart %d, %d; want the cache's %d", e, ce, epoch)
	}
	w, err := h2.live.EffectivePolicies().Watch(context.Background(), "", rvAfter)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	h2.start()
	// Recomputation deletes s (a cached key without output) and leaves the
	// unchanged r and t alone.
	if got, want := next(t, w), (ev{watch.Deleted, "default/s", "p2=2;"}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	none(t, w, 100*time.Millisecond)
	final, rvFinal := snapshotJSON(t, h2.live.EffectivePolicies())
	if rvFinal <= rvBefore {
		t.Errorf("resourceVersion went from %d to %d", rvBefore, rvFinal)
	}
	var got []map[string]interface{}
	_ = json.Unmarshal([]byte(final), &got)
	if len(got) != 2 {
		t.Fatalf("after recomputation: %s", final)
	}
	for _, o := range got {
		md := o["metadata"].(map[string]interface{})
		if rv := md["resourceVersion"]; rv == fmt.Sprint(rvFinal) {
			t.Errorf("unchanged object %v got a new resourceVersion", md["name"])
		}
	}

	// And again: the file now holds the post-recomputation state.
	h2.stop()
	h3 := newHarness(t, dir, time.Millisecond)
	again, rvAgain := snapshotJSON(t, h3.live.EffectivePolicies())
	if again != final || rvAgain != rvFinal {
		t.Errorf("second restart serves\n%s @%d\nwant\n%s @%d", again, rvAgain, final, rvFinal)
	}
}

func TestCorruptCacheIsRebuilt(t *testing.T) {
	tests := []struct {
		name  string
		write func(t *testing.T, path string)
	}{
		{"garbage", func(t *testing.T, path string) {
			_ = os.WriteFile(path, []byte("garbage garbage garbage garbage garbage garbage garbage garbage garbage"), 0o600)
		}},
		{"truncated", func(t *testing.T, path string) {
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			var size int64
			_ = db.View(func(tx *bolt.Tx) error { size = tx.Size(); return nil })
			_ = db.Close()
			_ = os.Truncate(path, size-int64(os.Getpagesize()))
		}},
		{"foreign bbolt file", func(t *testing.T, path string) {
			_ = os.Remove(path)
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			_ = db.Update(func(tx *bolt.Tx) error {
				b, _ := tx.CreateBucket([]byte("effectivepolicies"))
				return b.Put([]byte("default/r"), []byte(`{"metadata":{"name":"r","namespace":"default","resourceVersion":"1"}}`))
			})
			_ = db.Close()
		}},
		{"undecodable object", func(t *testing.T, path string) {
			db, _, _, err := cache.Open(filepath.Dir(path), encoded.CacheFormat, []string{ResourceEffectivePolicies, ResourceClusterEffectivePolicies}, nil)
			if err != nil {
				t.Fatal(err)
			}
			_ = db.Write(cache.Batch{ResourceEffectivePolicies: {Entries: []cache.Entry{{Key: "default/r", Data: []byte(`{"targets": 5}`)}}, ResourceVersion: resourceversion.Make(db.Epoch(), 99)}}, false)
			_ = db.Close()
		}},
		{"object under the wrong key", func(t *testing.T, path string) {
			db, _, _, _ := cache.Open(filepath.Dir(path), encoded.CacheFormat, []string{ResourceEffectivePolicies, ResourceClusterEffectivePolicies}, nil)
			_ = db.Write(cache.Batch{ResourceEffectivePolicies: {Entries: []cache.Entry{{Key: "default/zzz", Data: []byte(`{"metadata":{"name":"r","namespace":"default","resourceVersion":"1"}}`)}}, ResourceVersion: resourceversion.Make(db.Epoch(), 99)}}, false)
			_ = db.Close()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			objs := []runtime.Object{crd("example.com", "RetryPolicy", "retrypolicies", true), policy("default", "p1", "r", "1")}
			h1 := newHarness(t, dir, time.Millisecond, objs...)
			h1.start()
			h1.stop()
			tt.write(t, filepath.Join(dir, cache.FileName))

			h2 := newHarness(t, dir, time.Millisecond, objs...)
			if got, rv := snapshotJSON(t, h2.live.EffectivePolicies()); got != "[]" || rv != resourceversion.Make(resourceversion.EpochOf(rv), 0) {
				t.Fatalf("a corrupt cache was served: %s @%d", got, rv)
			}
			if h2.live.CacheError() != nil {
				t.Errorf("cache not usable after rebuild: %v", h2.live.CacheError())
			}
			h2.start()
			if got, _ := snapshotJSON(t, h2.live.EffectivePolicies()); got == "[]" {
				t.Error("nothing recomputed")
			}
			h2.stop()
			h3 := newHarness(t, dir, time.Millisecond)
			if got, _ := snapshotJSON(t, h3.live.EffectivePolicies()); got == "[]" {
				t.Error("rebuilt cache is empty")
			}
		})
	}
}

func TestUnwritableCacheDirServesFromMemory(t *testing.T) {
	f := filepath.Join(t.TempDir(), "not-a-dir")
	_ = os.WriteFile(f, nil, 0o600)
	h := newHarness(t, f, time.Millisecond, crd("example.com", "RetryPolicy", "retrypolicies", true), policy("default", "p1", "r", "1"))
	if h.live.CacheError() == nil {
		t.Fatal("no cache error reported")
	}
	h.start()
	if _, err := h.live.EffectivePolicies().Get(context.Background(), "default", "r"); err != nil {
		t.Errorf("Get: %v", err)
	}
	if err := h.live.CacheCheck().Check(nil); err != nil {
		t.Errorf("cache check failed: %v", err)
	}
}

// flakyFile fails writes while failing is set.
type flakyFile struct {
	cacheFile
	mu       sync.Mutex
	failing  bool
	replaces int
}

func (f *flakyFile) Write(b cache.Batch, replace bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failing {
		return fmt.Errorf("no space left on device")
	}
	if replace {
		f.replaces++
	}
	return f.cacheFile.Write(b, replace)
}

func TestFailedWritesServeFromMemoryAndRecover(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, dir, time.Millisecond, crd("example.com", "RetryPolicy", "retrypolicies", true), policy("default", "p1", "r", "1"))
	ff := &flakyFile{cacheFile: h.live.cache.db}
	h.live.cache.db = ff
	h.start()
	h.watching("retrypolicies", 1)
	ctx := context.Background()
	b := h.live.EffectivePolicies()

	ff.mu.Lock()
	ff.failing = true
	ff.mu.Unlock()
	h.create(retryGVR, policy("default", "p2", "s", "2"))
	h.eventually("s served", func() bool { _, err := b.Get(ctx, "default", "s"); return err == nil })
	if h.live.CacheError() == nil {
		t.Error("failed write not reported")
	}
	if err := h.live.CacheCheck().Check(nil); err != nil {
		t.Errorf("cache check must pass: %v", err)
	}

	ff.mu.Lock()
	ff.failing = false
	ff.mu.Unlock()
	h.create(retryGVR, policy("default", "p3", "t", "3"))
	h.eventually("t served", func() bool { _, err := b.Get(ctx, "default", "t"); return err == nil })
	// The store applies before the batch is written: wait for the write.
	h.eventually("cache recovered", func() bool { return h.live.CacheError() == nil })
	ff.mu.Lock()
	if ff.replaces != 1 {
		t.Errorf("full rewrites = %d, want 1", ff.replaces)
	}
	ff.mu.Unlock()
	want, wantRV := snapshotJSON(t, b)
	h.stop()
	h2 := newHarness(t, dir, time.Millisecond)
	if got, rv := snapshotJSON(t, h2.live.EffectivePolicies()); got != want || rv != wantRV {
		t.Errorf("after recovery the cache holds\n%s @%d\nwant\n%s @%d", got, rv, want, wantRV)
	}
}

// TestFreshCacheIsAnotherHistory: a server with another (or a rebuilt) cache
// numbers resourceVersions in a new epoch, so a resourceVersion of the first
// one is not resumed there (410 Gone) even when its counter is in range.
func TestFreshCacheIsAnotherHistory(t *testing.T) {
	objs := []runtime.Object{crd("example.com", "RetryPolicy", "retrypolicies", true), policy("default", "p1", "r", "1")}
	h1 := newHarness(t, t.TempDir(), time.Millisecond, objs...)
	h1.start()
	h1.eventually("r", func() bool {
		_, err := h1.live.EffectivePolicies().Get(context.Background(), "default", "r")
		return err == nil
	})
	_, rv1 := snapshotJSON(t, h1.live.EffectivePolicies())
	h1.stop()

	h2 := newHarness(t, t.TempDir(), time.Millisecond, objs...)
	h2.start()
	h2.eventually("r", func() bool {
		_, err := h2.live.EffectivePolicies().Get(context.Background(), "default", "r")
		return err == nil
	})
	_, rv2 := snapshotJSON(t, h2.live.EffectivePolicies())
	if resourceversion.EpochOf(rv1) == resourceversion.EpochOf(rv2) {
		t.Fatalf("two fresh caches share epoch %d", resourceversion.EpochOf(rv1))
	}
	if resourceversion.CounterOf(rv1) != resourceversion.CounterOf(rv2) {
		t.Logf("counters differ: %d, %d", rv1, rv2)
	}
	if _, err := h2.live.EffectivePolicies().Watch(context.Background(), "", rv1); !apierrors.IsResourceExpired(err) || !strings.Contains(err.Error(), "another server instance") {
		t.Errorf("watch from the other server's rv %d: %v", rv1, err)
	}
	if !h2.live.EffectivePolicies().ForeignResourceVersion(rv1) || h2.live.EffectivePolicies().ForeignResourceVersion(rv2) {
		t.Error("ForeignResourceVersion")
	}
}

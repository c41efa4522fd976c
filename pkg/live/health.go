package live

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/klog/v2"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/cache"
)

// ReadyCheck passes once the input informers have synced and the first full
// computation is done. Add it to the server's readyz checks.
func (l *Live) ReadyCheck() healthz.HealthChecker {
	return healthz.NamedCheck("effectivepolicy-computed", func(*http.Request) error {
		if !l.synced.Load() {
			return fmt.Errorf("input informers have not synced yet: %v", l.inputs.Failing())
		}
		if !l.ready.Load() {
			return fmt.Errorf("first computation not done yet")
		}
		return nil
	})
}

// CacheCheckName is the name of CacheCheck: /readyz/effectivepolicy-cache.
const CacheCheckName = "effectivepolicy-cache"

// CacheCheck reports whether the output cache is in use, without ever taking
// the server out of service: a server whose cache directory is unwritable or
// full serves correct answers from memory, and failing /readyz for it would
// make every replica on a full disk unavailable at once.
//
//   - In /readyz (and /readyz?verbose) it passes.
//   - Asked alone, /readyz/effectivepolicy-cache answers 500 with the reason
//     while persistence is off or failing (disabled, unusable directory, failed
//     write), "ok" otherwise. Monitoring and operators probe this path.
//   - While degraded it logs the reason at most once a minute.
//
// The metrics effectivepolicy_cache_degraded and
// effectivepolicy_cache_write_failures_total say the same.
func (l *Live) CacheCheck() healthz.HealthChecker {
	var mu sync.Mutex
	var last time.Time
	return healthz.NamedCheck(CacheCheckName, func(r *http.Request) error {
		err := l.CacheError()
		if err == nil {
			return nil
		}
		mu.Lock()
		if time.Since(last) > time.Minute {
			last = time.Now()
			klog.InfoS("Output cache degraded; serving from memory", "reason", err.Error())
		}
		mu.Unlock()
		if r != nil && r.URL != nil && strings.HasSuffix(r.URL.Path, "/"+CacheCheckName) {
			return err
		}
		return nil
	})
}

// HealthChecks returns ReadyCheck and CacheCheck.
func (l *Live) HealthChecks() []healthz.HealthChecker {
	return []healthz.HealthChecker{l.ReadyCheck(), l.CacheCheck()}
}

// Back-off of retryCache: the first retry after cacheRetryInitial, doubling
// up to cacheRetryMax. Variables so that tests can shorten them.
var (
	cacheRetryInitial = time.Second
	cacheRetryMax     = 30 * time.Second
)

// retryCache keeps trying to open the cache when it could not be opened at
// start (the directory missing, read-only or not a directory, the file
// locked by another process, ...), with back-off, until it succeeds or ctx is
// done. Without it a volume that is mounted or made writable a moment after
// the server started would leave the server without persistence until its
// next restart.
//
// By then the Stores serve a memory-only history (its own epoch, see
// docs/storage.md): the file is adopted for that history with cache.DB.Reset
// (its epoch becomes the Stores' and its content their snapshot), never
// restored from, since clients have seen resourceVersions of the Stores'
// history. Later batches are written to it as usual.
func (l *Live) retryCache(ctx context.Context) {
	if !l.retryOpen {
		return
	}
	backoff := wait.Backoff{Duration: cacheRetryInitial, Factor: 2, Cap: cacheRetryMax, Steps: math.MaxInt32}
	for {
		t := time.NewTimer(backoff.Step())
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		// Objects in the file are not decoded: none is restored, the
		// worker's Reset replaces them.
		db, _, err := l.openCacheFile(nil)
		if err == nil {
			a := adoption{db: db, done: make(chan error, 1)}
			select {
			case l.adopt <- a:
				err = <-a.done
			case <-ctx.Done():
				_ = db.Close()
				return
			}
			if err == nil {
				return
			}
		}
		klog.V(2).InfoS("Output cache still unavailable; will retry", "dir", l.cacheDir, "reason", err.Error(), "retryIn", backoff.Duration)
	}
}

// adoption hands a cache file that became usable to the worker, which
// answers on done whether it adopted it.
type adoption struct {
	db   *cache.DB
	done chan error
}

// adoptCache makes a.db hold the Stores' current history and writes later
// batches to it; on failure the file is closed and retryCache tries again.
func (l *Live) adoptCache(a adoption) {
	db := a.db
	batch := l.snapshotBatch()
	if err := db.Reset(l.namespaced.Epoch(), batch); err != nil {
		_ = db.Close()
		cacheWriteFailures.Inc()
		err = fmt.Errorf("adopting the output cache %s: %w", db.Path(), err)
		l.setCacheErr(err)
		a.done <- err
		return
	}
	l.db = db
	l.rewrite = false
	l.setCacheErr(nil)
	cacheWrites.Inc()
	l.reportCacheSize()
	klog.InfoS("Output cache available again; it now holds the served outputs", "file", db.Path(),
		"effectivepolicies", len(batch[ResourceEffectivePolicies].Entries), "clustereffectivepolicies", len(batch[ResourceClusterEffectivePolicies].Entries))
	a.done <- nil
}

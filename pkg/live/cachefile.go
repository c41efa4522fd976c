package live

// The bbolt cache of the outputs: opened and restored at start-up (a bad file is
// discarded and rebuilt), written by the worker after each applied batch,
// opened again with back-off when it could not be at start-up, and its state
// reported in /readyz and metrics.

import (
	"context"
	"fmt"
	"math"
	"os"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/cache"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/resourceversion"
)

// persistence is the cache's lifecycle: it restores the Stores from the
// file at start-up, writes what they apply, retries a file it could not open
// and reports the cache's state. Apart from err and retry's open, it is used
// only by the goroutine of Run (the first computation, then the worker
// loop), like the Stores: a file that becomes usable later reaches that
// goroutine through adopt.
type persistence struct {
	dir    string
	stores storeSet
	// err is set when persistence is off or failing (memory only).
	err atomic.Pointer[error]

	db      cacheFile // nil: memory only
	rewrite bool      // a write failed: the next one rewrites everything
	adopt   chan adoption
	// retryOpen: the cache directory was set but the file could not be
	// opened at start; retry keeps trying.
	retryOpen bool
}

func newPersistence(dir string, stores storeSet) *persistence {
	return &persistence{dir: dir, stores: stores, adopt: make(chan adoption)}
}

// CacheError returns why the cache is not in use or failing, nil when it
// works.
func (l *Live) CacheError() error { return l.cache.failure() }

// failure returns why the cache is not in use or failing, nil when it
// works.
func (p *persistence) failure() error {
	if e := p.err.Load(); e != nil {
		return *e
	}
	return nil
}

func (p *persistence) setErr(err error) {
	if err == nil {
		p.err.Store(nil)
		cacheDegraded.Set(0)
		return
	}
	p.err.Store(&err)
	cacheDegraded.Set(1)
}

// decodeOutput decodes a cache entry of resource.
func decodeOutput(resource string, data []byte) (*encoded.Object, error) {
	o, err := encoded.FromCacheBytes(data)
	if err != nil {
		return nil, err
	}
	if want, ok := resourceKinds[resource]; !ok || o.Kind != want {
		return nil, fmt.Errorf("a %s stored as %s", o.Kind, resource)
	}
	return o, nil
}

// resourceKinds are the kinds each resource (bucket) holds.
var resourceKinds = map[string]encoded.Kind{
	ResourceEffectivePolicies:        encoded.KindEffectivePolicy,
	ResourceClusterEffectivePolicies: encoded.KindClusterEffectivePolicy,
	ResourcePolicyReaches:            encoded.KindPolicyReach,
	ResourceClusterPolicyReaches:     encoded.KindClusterPolicyReach,
}

func cacheKey(namespace, name string) string { return namespace + "/" + name }

// open opens the cache file and restores the Stores from it; when it
// cannot, the Stores start empty and retry may open the file later.
func (p *persistence) open() {
	p.openFile()
	p.retryOpen = p.dir != "" && p.db == nil
}

// openFile opens the cache file, if any, and restores the Stores from it.
func (p *persistence) openFile() {
	if p.dir == "" {
		p.setErr(fmt.Errorf("persistence disabled (--cache-dir is empty)"))
		klog.InfoS("Output cache disabled; serving from memory only")
		return
	}
	// Objects are decoded once, while the file is validated, and kept for
	// the restore below. Their content stays compressed (encoded.Object).
	decoded := map[string]*encoded.Object{}
	validate := func(resource string, e cache.Entry) error {
		obj, err := decodeOutput(resource, e.Data)
		if err != nil {
			return err
		}
		decoded[resource+"\x00"+e.Key] = obj
		ns := obj.Namespace
		if obj.Kind.Cluster() {
			ns = ""
		}
		if obj.Name == "" || cacheKey(ns, obj.Name) != e.Key {
			return fmt.Errorf("object %s/%s stored under key %q", obj.Namespace, obj.Name, e.Key)
		}
		if _, err := resourceversion.Parse(obj.ResourceVersion); err != nil {
			return fmt.Errorf("resourceVersion %q: %w", obj.ResourceVersion, err)
		}
		return nil
	}
	db, loaded, err := p.openDB(validate)
	if err != nil {
		klog.ErrorS(err, "Output cache unavailable; serving from memory only", "dir", p.dir)
		return
	}
	p.db = db
	p.setErr(nil)
	p.reportSize()
	for resource, rs := range p.stores.byResource() {
		store := rs.store
		res := loaded[resource]
		objs := make([]*encoded.Object, 0, len(res.Entries))
		for _, e := range res.Entries {
			obj, ok := decoded[resource+"\x00"+e.Key]
			if !ok { // validated above; cannot happen
				continue
			}
			objs = append(objs, obj)
		}
		store.Restore(objs, db.Epoch(), res.ResourceVersion)
		klog.InfoS("Restored outputs from cache", "resource", resource, "objects", len(objs), "resourceVersion", store.ResourceVersion(), "epoch", store.Epoch())
	}
}

// cacheFile is what the live layer uses of *cache.DB.
type cacheFile interface {
	Write(b cache.Batch, replace bool) error
	Path() string
	Close() error
}

// entries turns what a Store applied into cache entries, in the same order.
// An applied object's cache form is its own bytes.
func entries(applied []*encoded.Object, changes []outputChange, rv uint64) cache.Resource {
	deleted := map[string]bool{}
	for _, c := range changes {
		deleted[cacheKey(c.Namespace, c.Name)] = c.Object == nil
	}
	res := cache.Resource{ResourceVersion: rv, Entries: make([]cache.Entry, 0, len(applied))}
	for _, obj := range applied {
		key := cacheKey(obj.Namespace, obj.Name)
		e := cache.Entry{Key: key}
		if !deleted[key] {
			var err error
			if e.Data, err = obj.CacheBytes(); err != nil {
				klog.ErrorS(err, "Cannot encode output for the cache", "key", key)
				continue
			}
		}
		res.Entries = append(res.Entries, e)
	}
	return res
}

// cacheResources are the resources (bbolt buckets) of the cache file.
var cacheResources = []string{ResourceEffectivePolicies, ResourceClusterEffectivePolicies, ResourcePolicyReaches, ResourceClusterPolicyReaches}

// openDB opens the cache file (validate as for cache.Open) and
// accounts for the outcome: a discarded file in effectivepolicy_cache_discarded_total
// and the log, an unusable one in the write-failure metric and the cache
// check.
func (p *persistence) openDB(validate func(resource string, e cache.Entry) error) (*cache.DB, map[string]cache.Resource, error) {
	db, loaded, discarded, err := cache.Open(p.dir, encoded.CacheFormat, cacheResources, validate)
	if discarded != nil {
		cacheDiscarded.Inc()
		klog.ErrorS(discarded, "Discarded the output cache; it will be rebuilt", "dir", p.dir)
	}
	if err != nil {
		cacheWriteFailures.Inc()
		p.setErr(fmt.Errorf("output cache unavailable, serving from memory only: %w", err))
		return nil, nil, err
	}
	return db, loaded, nil
}

// snapshotBatch is the whole content of the Stores as one cache batch (to
// rewrite or adopt a file).
func (p *persistence) snapshotBatch() cache.Batch {
	batch := cache.Batch{}
	for resource, rs := range p.stores.byResource() {
		objs, rv := rs.store.Snapshot()
		batch[resource] = entries(objs, nil, rv)
	}
	return batch
}

// write writes a batch; after a failed write, the next one rewrites
// both resources whole, so the file never keeps a resourceVersion older than
// one a client has seen together with content that contradicts it.
func (p *persistence) write(batch cache.Batch) {
	if p.db == nil {
		return
	}
	replace := p.rewrite
	if replace {
		batch = p.snapshotBatch()
	}
	if err := p.db.Write(batch, replace); err != nil {
		cacheWriteFailures.Inc()
		if !p.rewrite {
			klog.ErrorS(err, "Writing the output cache failed; serving from memory, will retry with the next change", "file", p.db.Path())
		}
		p.rewrite = true
		p.setErr(fmt.Errorf("writing the output cache %s: %w", p.db.Path(), err))
		return
	}
	if replace {
		klog.InfoS("Output cache rewritten after a failed write", "file", p.db.Path())
	}
	p.rewrite = false
	p.setErr(nil)
	cacheWrites.Inc()
	p.reportSize()
}

// reportSize sets effectivepolicy_cache_size_bytes to the size of
// the bbolt file (bbolt grows the file, never shrinks it).
func (p *persistence) reportSize() {
	if p.db == nil {
		return
	}
	if fi, err := os.Stat(p.db.Path()); err == nil {
		cacheSize.Set(float64(fi.Size()))
	}
}

// Back-off of retry: the first retry after cacheRetryInitial, doubling
// up to cacheRetryMax. Variables so that tests can shorten them.
var (
	cacheRetryInitial = time.Second
	cacheRetryMax     = 30 * time.Second
)

// retry keeps trying to open the cache when it could not be opened at
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
func (p *persistence) retry(ctx context.Context) {
	if !p.retryOpen {
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
		db, _, err := p.openDB(nil)
		if err == nil {
			a := adoption{db: db, done: make(chan error, 1)}
			select {
			case p.adopt <- a:
				err = <-a.done
			case <-ctx.Done():
				_ = db.Close()
				return
			}
			if err == nil {
				return
			}
		}
		klog.V(2).InfoS("Output cache still unavailable; will retry", "dir", p.dir, "reason", err.Error(), "retryIn", backoff.Duration)
	}
}

// adoption hands a cache file that became usable to the worker, which
// answers on done whether it adopted it.
type adoption struct {
	db   *cache.DB
	done chan error
}

// adoptFile makes a.db hold the Stores' current history and writes later
// batches to it; on failure the file is closed and retry tries again.
func (p *persistence) adoptFile(a adoption) {
	db := a.db
	batch := p.snapshotBatch()
	if err := db.Reset(p.stores.namespaced.Epoch(), batch); err != nil {
		_ = db.Close()
		cacheWriteFailures.Inc()
		err = fmt.Errorf("adopting the output cache %s: %w", db.Path(), err)
		p.setErr(err)
		a.done <- err
		return
	}
	p.db = db
	p.rewrite = false
	p.setErr(nil)
	cacheWrites.Inc()
	p.reportSize()
	klog.InfoS("Output cache available again; it now holds the served outputs", "file", db.Path(),
		"effectivepolicies", len(batch[ResourceEffectivePolicies].Entries), "clustereffectivepolicies", len(batch[ResourceClusterEffectivePolicies].Entries))
	a.done <- nil
}

// close closes the cache file, once Run's goroutines are done with it.
func (p *persistence) close() {
	if p.db != nil {
		if err := p.db.Close(); err != nil {
			klog.ErrorS(err, "Closing the output cache")
		}
		p.db = nil
	}
}

package live

// The bbolt cache of the outputs: opened and restored at start-up (a bad file is
// discarded and rebuilt), written by the worker after each applied batch, and its
// state reported in /readyz and metrics.

import (
	"fmt"
	"os"

	"k8s.io/klog/v2"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/cache"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/resourceversion"
)

// CacheError returns why the cache is not in use or failing, nil when it
// works.
func (l *Live) CacheError() error {
	if p := l.cacheErr.Load(); p != nil {
		return *p
	}
	return nil
}

func (l *Live) setCacheErr(err error) {
	if err == nil {
		l.cacheErr.Store(nil)
		cacheDegraded.Set(0)
		return
	}
	l.cacheErr.Store(&err)
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

func (l *Live) openCache() {
	if l.cacheDir == "" {
		l.setCacheErr(fmt.Errorf("persistence disabled (--cache-dir is empty)"))
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
	db, loaded, err := l.openCacheFile(validate)
	if err != nil {
		klog.ErrorS(err, "Output cache unavailable; serving from memory only", "dir", l.cacheDir)
		return
	}
	l.db = db
	l.setCacheErr(nil)
	l.reportCacheSize()
	for resource, rs := range l.stores() {
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

// openCacheFile opens the cache file (validate as for cache.Open) and
// accounts for the outcome: a discarded file in effectivepolicy_cache_discarded_total
// and the log, an unusable one in the write-failure metric and the cache
// check.
func (l *Live) openCacheFile(validate func(resource string, e cache.Entry) error) (*cache.DB, map[string]cache.Resource, error) {
	db, loaded, discarded, err := cache.Open(l.cacheDir, encoded.CacheFormat, cacheResources, validate)
	if discarded != nil {
		cacheDiscarded.Inc()
		klog.ErrorS(discarded, "Discarded the output cache; it will be rebuilt", "dir", l.cacheDir)
	}
	if err != nil {
		cacheWriteFailures.Inc()
		l.setCacheErr(fmt.Errorf("output cache unavailable, serving from memory only: %w", err))
		return nil, nil, err
	}
	return db, loaded, nil
}

// snapshotBatch is the whole content of the Stores as one cache batch (to
// rewrite or adopt a file).
func (l *Live) snapshotBatch() cache.Batch {
	batch := cache.Batch{}
	for resource, rs := range l.stores() {
		objs, rv := rs.store.Snapshot()
		batch[resource] = entries(objs, nil, rv)
	}
	return batch
}

// persist writes a batch; after a failed write, the next one rewrites
// both resources whole, so the file never keeps a resourceVersion older than
// one a client has seen together with content that contradicts it.
func (l *Live) persist(batch cache.Batch) {
	if l.db == nil {
		return
	}
	replace := l.rewrite
	if replace {
		batch = l.snapshotBatch()
	}
	if err := l.db.Write(batch, replace); err != nil {
		cacheWriteFailures.Inc()
		if !l.rewrite {
			klog.ErrorS(err, "Writing the output cache failed; serving from memory, will retry with the next change", "file", l.db.Path())
		}
		l.rewrite = true
		l.setCacheErr(fmt.Errorf("writing the output cache %s: %w", l.db.Path(), err))
		return
	}
	if replace {
		klog.InfoS("Output cache rewritten after a failed write", "file", l.db.Path())
	}
	l.rewrite = false
	l.setCacheErr(nil)
	cacheWrites.Inc()
	l.reportCacheSize()
}

// reportCacheSize sets effectivepolicy_cache_size_bytes to the size of
// the bbolt file (bbolt grows the file, never shrinks it).
func (l *Live) reportCacheSize() {
	if l.db == nil {
		return
	}
	if fi, err := os.Stat(l.db.Path()); err == nil {
		cacheSize.Set(float64(fi.Size()))
	}
}

package live

import (
	"context"
	"fmt"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/inputs"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/reach"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/cache"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/resourceversion"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/versioned"
)

// outputStore is a versioned store of outputs in the form the REST layer
// serves.
type outputStore = versioned.Store[*encoded.Object]

// outputChange is a put or delete of an output.
type outputChange = versioned.Change[*encoded.Object]

// Resource names, also the bbolt bucket names.
const (
	ResourceEffectivePolicies        = "effectivepolicies"
	ResourceClusterEffectivePolicies = "clustereffectivepolicies"
	ResourcePolicyReaches            = "policyreaches"
	ResourceClusterPolicyReaches     = "clusterpolicyreaches"
)

// batchSize bounds the keys computed, applied and written in one batch (one
// resourceVersion per store, one bbolt transaction).
const batchSize = 500

// Live is the running live layer.
type Live struct {
	engine   Engine
	inputs   *inputs.Manager
	debounce time.Duration
	// reviewTimeout bounds a review's hold of the engine (Options.ReviewTimeout).
	reviewTimeout time.Duration

	stores                         storeSet
	nsBackend, clBackend           *Backend
	reachNSBackend, reachCLBackend *Backend
	// reach holds every output's source entries by policy (pkg/reach);
	// written only by the goroutine of Run, like the Stores.
	reach *reach.Index

	// queue holds the dirty keys until the worker applies them, and the
	// generation it has applied, which reads wait for (dirty.go).
	queue *dirtyQueue

	// cache restores the Stores from the bbolt file and persists what they
	// apply (cachefile.go).
	cache *persistence

	started atomic.Bool
	synced  atomic.Bool // inputs synced once
	ready   atomic.Bool // first full computation done
	// reachesBuilt is closed once every policy's reach has been built
	// after the first full computation.
	reachesBuilt chan struct{}
}

// NewWithEngine builds the live layer around engine, reading the cluster
// through client. It opens (and if need be rebuilds) the cache and restores
// the Stores from it, so the Backends serve the cached objects at once.
func NewWithEngine(o *Options, engine Engine, client dynamic.Interface) (*Live, error) {
	if errs := o.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("invalid options: %v", errs)
	}
	registerMetrics()
	epoch := resourceversion.NewEpoch() // memory only; the cache's replaces it
	stores := storeSet{
		namespaced: newStore(o, epoch, ResourceEffectivePolicies, true),
		cluster:    newStore(o, epoch, ResourceClusterEffectivePolicies, false),
		reachNS:    newStore(o, epoch, ResourcePolicyReaches, true),
		reachCL:    newStore(o, epoch, ResourceClusterPolicyReaches, false),
	}
	l := &Live{
		engine:        engine,
		debounce:      o.RecomputeDebounce,
		reviewTimeout: o.ReviewTimeout,
		stores:        stores,
		reach:         reach.NewIndex(),
		queue:         newDirtyQueue(),
		cache:         newPersistence(o.CacheDir, stores),
		reachesBuilt:  make(chan struct{}),
	}
	l.nsBackend = &Backend{l: l, store: stores.namespaced, namespaced: true}
	l.clBackend = &Backend{l: l, store: stores.cluster}
	l.reachNSBackend = &Backend{l: l, store: stores.reachNS, namespaced: true, reach: true}
	l.reachCLBackend = &Backend{l: l, store: stores.reachCL, reach: true}
	l.inputs = inputs.NewManager(client, sink{engine: engine, queue: l.queue})
	l.cache.open()
	return l, nil
}

// newStore returns the empty Store of one served resource.
func newStore(o *Options, epoch uint32, resource string, namespaced bool) *outputStore {
	return versioned.New[*encoded.Object](versioned.Options{
		Namespaced: namespaced, HistorySize: o.WatchHistorySize, Epoch: epoch,
		Resource: v1alpha1.Resource(resource),
	})
}

// EffectivePolicies is the Backend of the namespaced resource.
func (l *Live) EffectivePolicies() *Backend { return l.nsBackend }

// ClusterEffectivePolicies is the Backend of the cluster-scoped resource.
func (l *Live) ClusterEffectivePolicies() *Backend { return l.clBackend }

// PolicyReaches is the Backend of policyreaches.
func (l *Live) PolicyReaches() *Backend { return l.reachNSBackend }

// ClusterPolicyReaches is the Backend of clusterpolicyreaches.
func (l *Live) ClusterPolicyReaches() *Backend { return l.reachCLBackend }

// resourceStore is one served resource's Store and the kind it holds.
type resourceStore struct {
	kind  encoded.Kind
	store *outputStore
}

// storeSet holds the Stores of the four served resources: effective
// policies and, built from them, policy reaches (docs/spec.md §8),
// namespaced and cluster-scoped. They are written only by the goroutine of
// Run.
type storeSet struct {
	namespaced, cluster *outputStore
	reachNS, reachCL    *outputStore
}

// byResource maps each resource (and bbolt bucket) to its Store.
func (s storeSet) byResource() map[string]resourceStore {
	return map[string]resourceStore{
		ResourceEffectivePolicies:        {encoded.KindEffectivePolicy, s.namespaced},
		ResourceClusterEffectivePolicies: {encoded.KindClusterEffectivePolicy, s.cluster},
		ResourcePolicyReaches:            {encoded.KindPolicyReach, s.reachNS},
		ResourceClusterPolicyReaches:     {encoded.KindClusterPolicyReach, s.reachCL},
	}
}

// Inputs exposes the informer manager (for diagnostics and tests).
func (l *Live) Inputs() *inputs.Manager { return l.inputs }

// Ready reports whether the inputs have synced and the first full
// computation is done.
func (l *Live) Ready() bool { return l.ready.Load() }

// Run starts the informers and the recompute worker and blocks until ctx is
// done. The Backends serve (the cached objects) before Run; they are brought
// up to date, and the readiness check passes, once the inputs have synced and
// the first full computation is done.
func (l *Live) Run(ctx context.Context) error {
	if !l.started.CompareAndSwap(false, true) {
		return fmt.Errorf("live layer already started")
	}
	// Bulk mode from before the first event to the full computation:
	// whatever arrives in between is part of the engine's state, which the
	// full computation reads whole (see fullRecompute).
	l.engine.SetBulk(true)
	endStartupGC := startupGC()
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); l.inputs.Run(ctx) }()
	go func() { defer wg.Done(); l.reportInformers(ctx, informerReportInterval) }()
	go func() { defer wg.Done(); l.cache.retry(ctx) }()
	defer func() {
		wg.Wait()
		l.cache.close()
	}()

	start := time.Now()
	if !l.inputs.WaitForSync(ctx) {
		l.engine.SetBulk(false)
		endStartupGC()
		return ctx.Err()
	}
	// Off before fullRecompute reads the engine's keys: an event after this
	// point returns its keys, which are marked dirty, and either are among
	// the keys fullRecompute reads or stay dirty for the worker, which runs
	// next. An event before it (in bulk mode, no keys) is already in the
	// engine's state when fullRecompute reads Keys().
	l.engine.SetBulk(false)
	l.synced.Store(true)
	klog.InfoS("Input informers synced", "duration", time.Since(start), "running", l.inputs.Running())
	policies := l.fullRecompute()
	l.engine.DropMemo()
	// Collect the memo now: the garbage collector's next target was set
	// while the memo was live, and the reaches built next would otherwise
	// grow the heap on top of it.
	goruntime.GC()
	l.ready.Store(true)
	klog.InfoS("First computation done; ready", "duration", time.Since(start),
		"effectivepolicies", len(snapshotKeys(l.stores.namespaced)), "clustereffectivepolicies", len(snapshotKeys(l.stores.cluster)))
	// The reaches are read off the outputs: built once those are served.
	// Their reads wait for this (awaitReaches); the worker starts after it.
	l.applyReaches(l.everyPolicy(policies))
	close(l.reachesBuilt)
	endStartupGC()
	klog.InfoS("Policy reaches built", "duration", time.Since(start),
		"policyreaches", len(snapshotKeys(l.stores.reachNS)), "clusterpolicyreaches", len(snapshotKeys(l.stores.reachCL)))
	// Keys that changed during the full computation are dirty: the worker
	// flushes them first.
	signal(l.queue.kick)
	l.worker(ctx)
	return nil
}

// startupGCPercent is the garbage collector's target during start-up: the
// informers' initial lists, the engine's bulk feed and its first full
// computation allocate several times the memory the server keeps, and with
// Go's default (100: the heap may grow to twice what is live) that transient
// set the process's peak RSS, several times what is live once ready
// (docs/benchmarks/README.md, "Start-up GC").
const startupGCPercent = 50

// startupGC lowers the GC target for start-up and returns the function that
// ends it: it restores the previous target and returns the start-up's
// garbage to the operating system at once (the runtime would take minutes).
// A GOGC set by the operator is left alone.
func startupGC() (end func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(startupGCPercent)
	var once sync.Once
	return func() {
		once.Do(func() {
			debug.SetGCPercent(old)
			debug.FreeOSMemory()
		})
	}
}

// fullRecompute recomputes every key the engine has an output for, every
// key the Stores hold (restored from the cache or computed before) and every
// dirty key. It returns the dirty policies and those whose entries it
// changed; the caller builds their reaches (all of them, at start-up).
func (l *Live) fullRecompute() map[compute.Key]struct{} {
	dirty, policies, gen := l.queue.take()
	set := map[compute.Key]struct{}{}
	for _, k := range dirty {
		set[k] = struct{}{}
	}
	for _, k := range l.engine.Keys() {
		set[k] = struct{}{}
	}
	for _, k := range snapshotKeys(l.stores.namespaced) {
		set[k] = struct{}{}
	}
	for _, k := range snapshotKeys(l.stores.cluster) {
		set[k] = struct{}{}
	}
	keys := make([]compute.Key, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	compute.SortKeys(keys)
	l.applyKeys(keys, policies)
	l.queue.setApplied(gen)
	return policies
}

func snapshotKeys(s *outputStore) []compute.Key {
	objs, _ := s.Snapshot()
	keys := make([]compute.Key, 0, len(objs))
	for _, o := range objs {
		keys = append(keys, compute.Key{Namespace: o.Namespace, Name: o.Name})
	}
	return keys
}

// worker is the only writer once the first computation is done (it runs on
// Run's goroutine): it applies the dirty keys to the Stores and the cache,
// gathering changes for the debounce interval unless a read is waiting, and
// adopts a cache file that became usable.
func (l *Live) worker(ctx context.Context) {
	for {
		urgent := false
		select {
		case <-ctx.Done():
			return
		case a := <-l.cache.adopt:
			l.cache.adoptFile(a)
			continue
		case <-l.queue.kick:
		case <-l.queue.urgent:
			urgent = true
		}
		if !urgent && l.debounce > 0 {
			t := time.NewTimer(l.debounce)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			case <-l.queue.urgent:
				t.Stop()
			}
		}
		l.flush()
	}
}

// flush applies every dirty key, then rebuilds the reaches of the dirty
// policies and of those whose entries in the recomputed outputs changed.
func (l *Live) flush() {
	keys, policies, gen := l.queue.take()
	l.applyKeys(keys, policies)
	l.applyReaches(policies)
	l.queue.setApplied(gen)
}

// applyKeys computes keys in batches, applies each batch to the Stores and
// writes what they applied to the cache, in that order, so that the cache
// sees the batches in the order the Stores applied them. It adds to
// policies those whose entries in the outputs changed.
func (l *Live) applyKeys(keys []compute.Key, policies map[compute.Key]struct{}) {
	for len(keys) > 0 {
		n := min(len(keys), batchSize)
		l.applyBatch(keys[:n], policies)
		keys = keys[n:]
	}
}

// computed is the result of l.compute for one key.
type computed struct {
	obj *encoded.Object
	// entries are the output's source entries (pkg/reach).
	entries []reach.Entry
	ok      bool
	err     error
}

// computeAll computes keys on up to GOMAXPROCS goroutines (the engine is
// safe for concurrent Compute; l.compute recovers a panic per key). The
// results are in the order of keys, so what is applied does not depend on
// scheduling.
func (l *Live) computeAll(keys []compute.Key) []computed {
	out := make([]computed, len(keys))
	workqueue.ParallelizeUntil(context.Background(), goruntime.GOMAXPROCS(0), len(keys), func(i int) {
		out[i] = l.compute(keys[i])
	})
	return out
}

func (l *Live) applyBatch(keys []compute.Key, policies map[compute.Key]struct{}) {
	start := time.Now()
	results := l.computeAll(keys)
	for i, r := range results {
		if r.err != nil {
			continue // keep the previous output (and its entries)
		}
		for _, p := range l.reach.Set(keys[i], r.entries) {
			policies[p] = struct{}{}
		}
	}
	recomputed.Add(float64(len(keys)))
	batch, changed := applyResults(keys, results,
		scopedStores{ResourceEffectivePolicies, l.stores.namespaced, ResourceClusterEffectivePolicies, l.stores.cluster})
	applyDuration.Observe(time.Since(start).Seconds())
	klog.V(4).InfoS("Recomputed", "keys", len(keys), "changed", changed, "duration", time.Since(start))
	if len(batch) > 0 {
		l.cache.write(batch)
	}
}

// scopedStores are the Stores of one kind's namespaced and cluster-scoped
// resources, with their names (the cache's buckets).
type scopedStores struct {
	nsResource string
	ns         *outputStore
	clResource string
	cl         *outputStore
}

// applyResults applies results, one per key (an error keeps the key's
// previous object, ok=false deletes it), to the Store of the key's scope,
// and returns what they applied as a cache batch and how many objects
// changed.
func applyResults(keys []compute.Key, results []computed, s scopedStores) (cache.Batch, int) {
	var nsChanges, clChanges []outputChange
	for i, r := range results {
		if r.err != nil {
			continue
		}
		var obj *encoded.Object
		if r.ok {
			obj = r.obj
		}
		c := outputChange{Namespace: keys[i].Namespace, Name: keys[i].Name, Object: obj}
		if keys[i].Namespace == "" {
			clChanges = append(clChanges, c)
		} else {
			nsChanges = append(nsChanges, c)
		}
	}
	batch, changed := cache.Batch{}, 0
	for _, x := range []struct {
		resource string
		store    *outputStore
		changes  []outputChange
	}{{s.nsResource, s.ns, nsChanges}, {s.clResource, s.cl, clChanges}} {
		if len(x.changes) == 0 {
			continue
		}
		if rv, applied := x.store.Apply(x.changes); len(applied) > 0 {
			batch[x.resource] = entries(applied, x.changes, rv)
			changed += len(applied)
		}
	}
	return batch, changed
}

// compute calls the engine, reads the output's source entries and encodes
// it (encoded.Object: compact and served without re-encoding;
// docs/storage.md). A panic of the engine is turned into an error so that
// no input can crash the server. Encoding runs here, on computeAll's
// goroutines, and the engine's output is dropped afterwards: the Stores
// keep only the encoded form, the reach index only the entries.
func (l *Live) compute(k compute.Key) (c computed) {
	defer func() {
		if r := recover(); r != nil {
			computePanics.Inc()
			c = computed{err: fmt.Errorf("engine panicked: %v", r)}
			klog.ErrorS(c.err, "Computing an output failed; keeping the previous one", "key", k.String())
		}
	}()
	obj, ok := l.engine.Compute(k)
	if !ok || obj == nil {
		return computed{}
	}
	enc, err := encoded.New(obj)
	if err != nil {
		klog.ErrorS(err, "Encoding an output failed; keeping the previous one", "key", k.String())
		return computed{err: err}
	}
	return computed{obj: enc, entries: reach.FromOutput(obj), ok: true}
}

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
	"k8s.io/klog/v2"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/inputs"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/reach"
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

// Live is the running live layer. It runs the start-up and the worker
// (Run), gates the reads on them, and composes the parts that do the work:
// the dirty queue (dirty.go), the computation of the outputs (outputs.go)
// and of the policy reaches (reaches.go), the cache (cachefile.go) and the
// answers to traces and reviews (answers.go).
type Live struct {
	engine   Engine
	inputs   *inputs.Manager
	debounce time.Duration

	stores                         storeSet
	nsBackend, clBackend           *Backend
	reachNSBackend, reachCLBackend *Backend

	// queue holds the dirty keys until the worker applies them, and the
	// generation it has applied, which reads wait for.
	queue *dirtyQueue
	// outputs computes the effective policies the worker takes from queue,
	// reaches builds the policy reaches from them.
	outputs *outputs
	reaches *reaches
	// cache restores the Stores from the bbolt file and persists what they
	// apply.
	cache *persistence
	// answers serves traces and reviews from the engine.
	answers *Answers

	started atomic.Bool
	synced  atomic.Bool // inputs synced once
	ready   atomic.Bool // first full computation done
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
		engine:   engine,
		debounce: o.RecomputeDebounce,
		stores:   stores,
		queue:    newDirtyQueue(),
		cache:    newPersistence(o.CacheDir, stores),
	}
	index := reach.NewIndex()
	l.outputs = &outputs{engine: engine, index: index, cache: l.cache,
		stores: scopedStores{ResourceEffectivePolicies, stores.namespaced, ResourceClusterEffectivePolicies, stores.cluster}}
	l.reaches = &reaches{engine: engine, index: index, cache: l.cache, built: make(chan struct{}),
		outcomes: newOutcomeMetrics(policySources, policiesKnown, policiesReachingNothing),
		stores:   scopedStores{ResourcePolicyReaches, stores.reachNS, ResourceClusterPolicyReaches, stores.reachCL}}
	l.answers = &Answers{engine: engine, reviewTimeout: o.ReviewTimeout, turn: make(chan struct{}, 1), ready: l.Ready, awaitApplied: l.awaitApplied}
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
	go func() { defer wg.Done(); reportInformers(ctx, l.inputs, informerReportInterval) }()
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
	l.reaches.apply(l.reaches.every(policies))
	close(l.reaches.built)
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
	l.outputs.apply(keys, policies)
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
	l.outputs.apply(keys, policies)
	l.reaches.apply(policies)
	l.queue.setApplied(gen)
}

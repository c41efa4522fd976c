package live

// Effective policies: the worker hands the keys it takes from the dirty set
// to outputs, which computes them on several goroutines, applies them to the
// Stores and writes them to the cache, one batch at a time.

import (
	"context"
	"fmt"
	goruntime "runtime"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/reach"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/cache"
)

// batchSize bounds the keys computed, applied and written in one batch (one
// resourceVersion per store, one bbolt transaction).
const batchSize = 500

// outputs computes the effective policies and applies them: to the Stores
// of the two effective-policy resources, to the cache, and their source
// entries to the reach index, which the reaches are built from. Used only
// by the goroutine of Run.
type outputs struct {
	engine Engine
	stores scopedStores
	// index holds every output's source entries by policy (pkg/reach);
	// outputs writes it, reaches reads it.
	index *reach.Index
	cache *persistence
}

// apply computes keys in batches, applies each batch to the Stores and
// writes what they applied to the cache, in that order, so that the cache
// sees the batches in the order the Stores applied them. It adds to
// policies those whose entries in the outputs changed.
func (o *outputs) apply(keys []compute.Key, policies map[compute.Key]struct{}) {
	for len(keys) > 0 {
		n := min(len(keys), batchSize)
		o.applyBatch(keys[:n], policies)
		keys = keys[n:]
	}
}

// computed is the result of outputs.compute (or reaches.build) for one key.
type computed struct {
	obj *encoded.Object
	// entries are the output's source entries (pkg/reach).
	entries []reach.Entry
	// tally is what a policy reach counts in the outcome metrics
	// (outcomes.go).
	tally []kindTally
	ok    bool
	err   error
}

// computeAll computes keys on up to GOMAXPROCS goroutines (the engine is
// safe for concurrent Compute; compute recovers a panic per key). The
// results are in the order of keys, so what is applied does not depend on
// scheduling.
func (o *outputs) computeAll(keys []compute.Key) []computed {
	out := make([]computed, len(keys))
	workqueue.ParallelizeUntil(context.Background(), goruntime.GOMAXPROCS(0), len(keys), func(i int) {
		out[i] = o.compute(keys[i])
	})
	return out
}

func (o *outputs) applyBatch(keys []compute.Key, policies map[compute.Key]struct{}) {
	start := time.Now()
	results := o.computeAll(keys)
	for i, r := range results {
		if r.err != nil {
			continue // keep the previous output (and its entries)
		}
		for _, p := range o.index.Set(keys[i], r.entries) {
			policies[p] = struct{}{}
		}
	}
	recomputed.Add(float64(len(keys)))
	batch, changed := applyResults(keys, results, o.stores)
	applyDuration.Observe(time.Since(start).Seconds())
	klog.V(4).InfoS("Recomputed", "keys", len(keys), "changed", changed, "duration", time.Since(start))
	if len(batch) > 0 {
		o.cache.write(batch)
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
func (o *outputs) compute(k compute.Key) (c computed) {
	defer func() {
		if r := recover(); r != nil {
			computePanics.Inc()
			c = computed{err: fmt.Errorf("engine panicked: %v", r)}
			klog.ErrorS(c.err, "Computing an output failed; keeping the previous one", "key", k.String())
		}
	}()
	obj, ok := o.engine.Compute(k)
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

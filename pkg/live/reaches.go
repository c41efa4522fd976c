package live

// Policy reaches (docs/spec.md §8): rebuilt by the worker, after the outputs they
// are read from, for the policies whose entries in those outputs or whose
// own state changed; stored, cached and served like the outputs.

import (
	"context"
	"fmt"
	goruntime "runtime"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/reach"
)

// awaitReaches makes a read of a reach, once the outputs of the first
// computation are served, wait until the reaches have been built from them
// (or ctx ends). Before, reads serve what the cache restored, as for the
// outputs.
func (l *Live) awaitReaches(ctx context.Context) error {
	if !l.ready.Load() {
		return nil
	}
	select {
	case <-l.reachesBuilt:
		return nil
	case <-ctx.Done():
		return apierrors.NewTimeoutError("policy reaches are still being built after start-up; try again", 1)
	}
}

// everyPolicy adds to policies every policy that may have a reach: the
// engine's, those with entries, and those the Stores hold (restored from
// the cache or built before), for a full recomputation.
func (l *Live) everyPolicy(policies map[compute.Key]struct{}) map[compute.Key]struct{} {
	for _, k := range l.engine.PolicyKeys() {
		policies[k] = struct{}{}
	}
	for _, k := range l.reach.Policies() {
		policies[k] = struct{}{}
	}
	for _, s := range []*outputStore{l.stores.reachNS, l.stores.reachCL} {
		for _, k := range snapshotKeys(s) {
			policies[k] = struct{}{}
		}
	}
	return policies
}

// applyReaches rebuilds the reaches of policies, in batches, and applies
// and persists them as applyBatch does the outputs.
func (l *Live) applyReaches(policies map[compute.Key]struct{}) {
	keys := make([]compute.Key, 0, len(policies))
	for k := range policies {
		keys = append(keys, k)
	}
	compute.SortKeys(keys)
	for len(keys) > 0 {
		n := min(len(keys), batchSize)
		l.applyReachBatch(keys[:n])
		keys = keys[n:]
	}
}

func (l *Live) applyReachBatch(keys []compute.Key) {
	start := time.Now()
	built := make([]computed, len(keys))
	// The index is only read here (the worker writes it, and is here).
	workqueue.ParallelizeUntil(context.Background(), goruntime.GOMAXPROCS(0), len(keys), func(i int) {
		built[i] = l.buildReach(keys[i])
	})
	batch, changed := applyResults(keys, built,
		scopedStores{ResourcePolicyReaches, l.stores.reachNS, ResourceClusterPolicyReaches, l.stores.reachCL})
	klog.V(4).InfoS("Rebuilt policy reaches", "policies", len(keys), "changed", changed, "duration", time.Since(start))
	if len(batch) > 0 {
		l.cache.write(batch)
	}
}

// buildReach builds and encodes the reach of one policy key; obj is nil
// when there is no policy of that name (any more).
func (l *Live) buildReach(k compute.Key) (c computed) {
	defer func() {
		if r := recover(); r != nil {
			computePanics.Inc()
			c = computed{err: fmt.Errorf("building a policy reach panicked: %v", r)}
			klog.ErrorS(c.err, "Building a policy reach failed; keeping the previous one", "key", k.String())
		}
	}()
	obj, ok := reach.Build(k, l.engine.Policies(k), l.reach.Of(k))
	if !ok {
		return computed{}
	}
	enc, err := encoded.New(obj)
	if err != nil {
		klog.ErrorS(err, "Encoding a policy reach failed; keeping the previous one", "key", k.String())
		return computed{err: err}
	}
	return computed{obj: enc, ok: true}
}

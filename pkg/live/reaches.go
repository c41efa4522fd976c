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

// reaches builds the policy reaches and applies them: to the Stores of the
// two policy-reach resources and to the cache. It reads the reach index
// that outputs writes. Only the goroutine of Run uses it, except await,
// which reads wait in.
type reaches struct {
	engine Engine
	stores scopedStores
	index  *reach.Index
	cache  *persistence
	// outcomes counts what the reaches say (outcomes.go).
	outcomes *outcomeMetrics
	// built is closed once every policy's reach has been built after the
	// first full computation.
	built chan struct{}
}

// awaitReaches makes a read of a reach, once the outputs of the first
// computation are served, wait until the reaches have been built from them
// (reaches.await). Before, reads serve what the cache restored, as for the
// outputs.
func (l *Live) awaitReaches(ctx context.Context) error {
	if !l.ready.Load() {
		return nil
	}
	return l.reaches.await(ctx)
}

// await waits until the reaches of the first computation are built, or ctx
// ends.
func (r *reaches) await(ctx context.Context) error {
	select {
	case <-r.built:
		return nil
	case <-ctx.Done():
		return apierrors.NewTimeoutError("policy reaches are still being built after start-up; try again", 1)
	}
}

// every adds to policies every policy that may have a reach: the
// engine's, those with entries, and those the Stores hold (restored from
// the cache or built before), for a full recomputation.
func (r *reaches) every(policies map[compute.Key]struct{}) map[compute.Key]struct{} {
	for _, k := range r.engine.PolicyKeys() {
		policies[k] = struct{}{}
	}
	for _, k := range r.index.Policies() {
		policies[k] = struct{}{}
	}
	for _, s := range []*outputStore{r.stores.ns, r.stores.cl} {
		for _, k := range snapshotKeys(s) {
			policies[k] = struct{}{}
		}
	}
	return policies
}

// apply rebuilds the reaches of policies, in batches, and applies and
// persists them as outputs.applyBatch does the outputs.
func (r *reaches) apply(policies map[compute.Key]struct{}) {
	keys := make([]compute.Key, 0, len(policies))
	for k := range policies {
		keys = append(keys, k)
	}
	compute.SortKeys(keys)
	for len(keys) > 0 {
		n := min(len(keys), batchSize)
		r.applyBatch(keys[:n])
		keys = keys[n:]
	}
}

func (r *reaches) applyBatch(keys []compute.Key) {
	start := time.Now()
	built := make([]computed, len(keys))
	// The index is only read here (the worker writes it, and is here).
	workqueue.ParallelizeUntil(context.Background(), goruntime.GOMAXPROCS(0), len(keys), func(i int) {
		built[i] = r.build(keys[i])
	})
	for i, c := range built {
		if c.err == nil { // an error keeps the previous reach, and its counts
			r.outcomes.set(keys[i], c.tally)
		}
	}
	r.outcomes.flush()
	batch, changed := applyResults(keys, built, r.stores)
	klog.V(4).InfoS("Rebuilt policy reaches", "policies", len(keys), "changed", changed, "duration", time.Since(start))
	if len(batch) > 0 {
		r.cache.write(batch)
	}
}

// build builds and encodes the reach of one policy key; obj is nil
// when there is no policy of that name (any more).
func (r *reaches) build(k compute.Key) (c computed) {
	defer func() {
		if p := recover(); p != nil {
			computePanics.Inc()
			c = computed{err: fmt.Errorf("building a policy reach panicked: %v", p)}
			klog.ErrorS(c.err, "Building a policy reach failed; keeping the previous one", "key", k.String())
		}
	}()
	obj, ok := reach.Build(k, r.engine.Policies(k), r.index.Of(k))
	if !ok {
		return computed{}
	}
	enc, err := encoded.New(obj)
	if err != nil {
		klog.ErrorS(err, "Encoding a policy reach failed; keeping the previous one", "key", k.String())
		return computed{err: err}
	}
	return computed{obj: enc, tally: tallyOf(obj), ok: true}
}

package live

// Dirty keys: the engine returns the keys an input change may affect; they wait
// here, with a generation, until the worker applies them. A read waits for the
// generation that was pending when it arrived (awaitApplied).

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// sink feeds input events to the engine and marks the keys it returns dirty.
type sink struct {
	engine Engine
	queue  *dirtyQueue
}

func (s sink) Upsert(obj *unstructured.Unstructured) {
	keys := s.engine.Upsert(obj)
	s.queue.mark(keys, s.engine.TakeChangedPolicies())
}

func (s sink) Delete(gk schema.GroupKind, namespace, name string) {
	keys := s.engine.Delete(gk, namespace, name)
	s.queue.mark(keys, s.engine.TakeChangedPolicies())
}

func (s sink) PolicyResources() []schema.GroupVersionResource { return s.engine.PolicyResources() }

// dirtyQueue is the dirty set and its generation, and the generation the
// worker has applied: the meeting point of the informers' goroutines (mark),
// the worker (take, setApplied) and the reads (await).
type dirtyQueue struct {
	// The dirty set and its generation: marked counts the mark calls that
	// added keys, so "every change up to generation g" is a point a read
	// can wait for.
	mu   sync.Mutex
	keys map[compute.Key]struct{}
	// policies are policies whose own state (kinds, labels, named targets)
	// changed: their reaches are rebuilt, as are those of the policies whose
	// entries in recomputed outputs changed.
	policies map[compute.Key]struct{}
	marked   uint64
	kick     chan struct{} // a change was marked: flush after the debounce
	urgent   chan struct{} // a read waits: flush now

	// applied is the generation the worker has applied to the Stores (and
	// written to the cache); appliedCh is closed and replaced whenever it
	// advances, waking the reads that wait for it.
	appliedMu sync.Mutex
	applied   uint64
	appliedCh chan struct{}
}

func newDirtyQueue() *dirtyQueue {
	return &dirtyQueue{
		keys:      map[compute.Key]struct{}{},
		policies:  map[compute.Key]struct{}{},
		kick:      make(chan struct{}, 1),
		urgent:    make(chan struct{}, 1),
		appliedCh: make(chan struct{}),
	}
}

// mark marks output keys, and policies whose reach must be rebuilt
// whatever the outputs say, dirty.
func (q *dirtyQueue) mark(keys, policies []compute.Key) {
	if len(keys) == 0 && len(policies) == 0 {
		return
	}
	q.mu.Lock()
	for _, k := range keys {
		q.keys[k] = struct{}{}
	}
	for _, k := range policies {
		q.policies[k] = struct{}{}
	}
	q.marked++
	dirtyKeys.Set(float64(len(q.keys)))
	q.mu.Unlock()
	signal(q.kick)
}

// signal wakes the worker without blocking: a signal already pending
// covers this one.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// take removes and returns every dirty key and policy, and the generation
// they make up to: once they are applied, every change marked so far is.
func (q *dirtyQueue) take() (keys []compute.Key, policies map[compute.Key]struct{}, gen uint64) {
	q.mu.Lock()
	keys = make([]compute.Key, 0, len(q.keys))
	for k := range q.keys {
		keys = append(keys, k)
	}
	q.keys = map[compute.Key]struct{}{}
	policies = q.policies
	q.policies = map[compute.Key]struct{}{}
	gen = q.marked
	dirtyKeys.Set(0)
	q.mu.Unlock()
	compute.SortKeys(keys)
	return keys, policies, gen
}

// setApplied records that every change up to generation gen is applied and
// wakes the reads waiting for it.
func (q *dirtyQueue) setApplied(gen uint64) {
	q.appliedMu.Lock()
	defer q.appliedMu.Unlock()
	if gen <= q.applied {
		return
	}
	q.applied = gen
	close(q.appliedCh)
	q.appliedCh = make(chan struct{})
}

// await makes a read see every change that was pending when it arrived: it
// asks the worker to flush at once (skipping the debounce) and waits until
// the worker has applied them, or until ctx ends. Reads never compute or
// write themselves; the worker is the only writer.
func (q *dirtyQueue) await(ctx context.Context) error {
	q.mu.Lock()
	want := q.marked
	q.mu.Unlock()
	var start time.Time
	for {
		q.appliedMu.Lock()
		applied, ch := q.applied, q.appliedCh
		q.appliedMu.Unlock()
		if applied >= want {
			if !start.IsZero() {
				readWait.Observe(time.Since(start).Seconds())
			}
			return nil
		}
		if start.IsZero() {
			start = time.Now()
		}
		signal(q.urgent)
		select {
		case <-ch:
		case <-ctx.Done():
			readWait.Observe(time.Since(start).Seconds())
			return apierrors.NewTimeoutError("effective policies are still being recomputed after recent changes; try again", 1)
		}
	}
}

// awaitApplied makes a read see every change that was pending when it
// arrived (dirtyQueue.await). Before the first computation reads serve the
// outputs restored from the cache and do not wait.
func (l *Live) awaitApplied(ctx context.Context) error {
	if !l.ready.Load() {
		return nil
	}
	return l.queue.await(ctx)
}

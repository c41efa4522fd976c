package live

// Dirty keys: the engine returns the keys an input change may affect; they wait
// here, with a generation, until the worker applies them. A read waits for the
// generation that was pending when it arrived (awaitApplied).

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// sink feeds input events to the engine and marks the keys it returns dirty.
type sink struct{ l *Live }

func (s sink) Upsert(obj *unstructured.Unstructured) {
	keys := s.l.engine.Upsert(obj)
	s.l.markDirty(keys, s.l.changedPolicies())
}

func (s sink) Delete(gk schema.GroupKind, namespace, name string) {
	keys := s.l.engine.Delete(gk, namespace, name)
	s.l.markDirty(keys, s.l.changedPolicies())
}

func (s sink) PolicyResources() []schema.GroupVersionResource { return s.l.engine.PolicyResources() }

// changedPolicies takes the policies whose own state changed from the
// engine.
func (l *Live) changedPolicies() []compute.Key {
	return l.engine.TakeChangedPolicies()
}

// markDirty marks output keys, and policies whose reach must be rebuilt
// whatever the outputs say, dirty.
func (l *Live) markDirty(keys, policies []compute.Key) {
	if len(keys) == 0 && len(policies) == 0 {
		return
	}
	l.dirtyMu.Lock()
	for _, k := range keys {
		l.dirty[k] = struct{}{}
	}
	for _, k := range policies {
		l.dirtyPolicies[k] = struct{}{}
	}
	l.marked++
	dirtyKeys.Set(float64(len(l.dirty)))
	l.dirtyMu.Unlock()
	signal(l.kick)
}

// signal wakes the worker without blocking: a signal already pending
// covers this one.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// takeDirty removes and returns every dirty key and policy, and the
// generation they make up to: once they are applied, every change marked
// so far is.
func (l *Live) takeDirty() (keys []compute.Key, policies map[compute.Key]struct{}, gen uint64) {
	l.dirtyMu.Lock()
	keys = make([]compute.Key, 0, len(l.dirty))
	for k := range l.dirty {
		keys = append(keys, k)
	}
	l.dirty = map[compute.Key]struct{}{}
	policies = l.dirtyPolicies
	l.dirtyPolicies = map[compute.Key]struct{}{}
	gen = l.marked
	dirtyKeys.Set(0)
	l.dirtyMu.Unlock()
	compute.SortKeys(keys)
	return keys, policies, gen
}

// setApplied records that every change up to generation gen is applied and
// wakes the reads waiting for it.
func (l *Live) setApplied(gen uint64) {
	l.appliedMu.Lock()
	defer l.appliedMu.Unlock()
	if gen <= l.applied {
		return
	}
	l.applied = gen
	close(l.appliedCh)
	l.appliedCh = make(chan struct{})
}

// awaitApplied makes a read see every change that was pending when it
// arrived: it asks the worker to flush at once (skipping the debounce) and
// waits until the worker has applied them, or until ctx ends. Reads never
// compute or write themselves; the worker is the only writer. Before the
// first computation reads serve the outputs restored from the cache and do
// not wait.
func (l *Live) awaitApplied(ctx context.Context) error {
	if !l.ready.Load() {
		return nil
	}
	l.dirtyMu.Lock()
	want := l.marked
	l.dirtyMu.Unlock()
	var start time.Time
	for {
		l.appliedMu.Lock()
		applied, ch := l.applied, l.appliedCh
		l.appliedMu.Unlock()
		if applied >= want {
			if !start.IsZero() {
				readWait.Observe(time.Since(start).Seconds())
			}
			return nil
		}
		if start.IsZero() {
			start = time.Now()
		}
		signal(l.urgent)
		select {
		case <-ch:
		case <-ctx.Done():
			readWait.Observe(time.Since(start).Seconds())
			return apierrors.NewTimeoutError("effective policies are still being recomputed after recent changes; try again", 1)
		}
	}
}

package live

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// gateEngine holds every Compute until its gate is opened, and counts the
// computations that ran on a goroutine other than the worker's.
type gateEngine struct {
	*fakeEngine
	armed atomic.Bool
	gate  chan struct{}
	calls atomic.Int32
}

func (e *gateEngine) Compute(k compute.Key) (runtime.Object, bool) {
	e.calls.Add(1)
	if e.armed.Load() {
		<-e.gate
	}
	return e.fakeEngine.Compute(k)
}

// Reads never compute: a Get or List that arrives while changes are pending
// waits for the worker (which applies them at once, without the debounce),
// and gives up with a Timeout when its deadline passes first.
func TestReadsWaitForTheWorker(t *testing.T) {
	h := newHarness(t, t.TempDir(), 59*time.Second, crd("example.com", "RetryPolicy", "retrypolicies", true))
	e := &gateEngine{fakeEngine: h.engine, gate: make(chan struct{})}
	o := NewOptions()
	o.CacheDir = t.TempDir()
	o.RecomputeDebounce = 59 * time.Second // only a waiting read makes the worker flush
	l, err := NewWithEngine(o, e, h.client)
	if err != nil {
		t.Fatal(err)
	}
	h.live = l
	h.start()
	h.watching("retrypolicies", 1)
	b := l.EffectivePolicies()

	// The worker is stuck computing p1: a read with a short deadline times out.
	e.armed.Store(true)
	h.create(retryGVR, policy("default", "p1", "r", "1"))
	h.eventually("engine saw p1", func() bool { return len(e.Keys()) == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err = b.Get(ctx, "default", "r")
	cancel()
	if !apierrors.IsTimeout(err) {
		t.Fatalf("Get while the worker computes: err = %v, want a Timeout", err)
	}
	if n := e.calls.Load(); n != 1 {
		t.Errorf("%d computations, want 1 (the worker's): the read computed", n)
	}

	// Once the worker is done, a waiting read sees the change.
	got := make(chan error, 1)
	go func() {
		obj, err := b.Get(context.Background(), "default", "r")
		if err == nil && describe(watch.Event{Object: obj}).msg != "p1=1;" {
			err = apierrors.NewInternalError(nil)
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("Get returned (%v) before the worker applied p1", err)
	case <-time.After(50 * time.Millisecond):
	}
	e.armed.Store(false)
	close(e.gate)
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("Get after the worker applied p1: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Get still waiting after the worker applied p1")
	}

	// A List sees a change made just before it, though the debounce is a
	// minute: the read cut it short.
	h.create(retryGVR, policy("default", "p2", "s", "2"))
	h.eventually("engine saw p2", func() bool { return len(e.Keys()) == 2 })
	objs, _, err := b.List(context.Background(), "default")
	if err != nil || len(objs) != 2 {
		t.Fatalf("List = %d objects, %v; want 2", len(objs), err)
	}
	if n := e.calls.Load(); n != 2 {
		t.Errorf("%d computations, want 2 (the worker's, one per key): a read computed", n)
	}
}

package compute

import (
	"context"
	goruntime "runtime"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/fold"
)

// Key names one output object. Namespace "" means a ClusterEffectivePolicy
// (cluster-scoped target).
type Key struct{ Namespace, Name string }

// String renders the key as "namespace/name", or "name" for a cluster key.
func (k Key) String() string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

// Options configure an Engine.
type Options struct {
	// Descriptors are extra policy-kind descriptors, on top of the built-ins;
	// they win over built-ins for the same group/kind.
	Descriptors []Descriptor
	// DefaultInheritedStrategy is "Atomic" (default when empty) or "Patch"
	// (docs/spec.md §5, last paragraph).
	DefaultInheritedStrategy string
}

// Engine holds the current inputs and computes outputs on demand. It is safe
// for concurrent use.
type Engine struct {
	mu sync.RWMutex
	st *state

	// memo is shared by all Compute calls (it is safe for concurrent use)
	// and kept across mutations: after an Upsert the caller typically
	// computes many keys that share ancestors and folds. memoMu only guards
	// replacing it (memo.refresh after a mutation).
	memoMu sync.Mutex
	memo   atomic.Pointer[fold.Memo]
	// memoDropped is set by DropMemo: the memo is rebuilt for edits only.
	memoDropped atomic.Bool
	// sensitive is the index SensitiveKind reads without e.mu.
	sensitive atomic.Pointer[sensitiveIndex]
}

// NewEngine returns an empty engine.
func NewEngine(opts Options) (*Engine, error) {
	st, err := newState(opts)
	if err != nil {
		return nil, err
	}
	e := &Engine{st: st}
	e.refreshSensitive()
	return e, nil
}

// Upsert records the current state of one input object and returns the keys
// whose content may have changed (sorted, deduplicated).
func (e *Engine) Upsert(obj *unstructured.Unstructured) []Key {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.refreshSensitive()
	return e.st.upsert(obj)
}

// Delete removes an input object and returns the keys whose content may have
// changed.
func (e *Engine) Delete(gk schema.GroupKind, namespace, name string) []Key {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.refreshSensitive()
	return e.st.delete(gk, namespace, name)
}

// SetBulk switches bulk mode on or off. In bulk mode Upsert and Delete skip
// the affected-key bookkeeping and return nil: a caller that feeds a whole
// cluster before computing every key (the live layer until its first full
// computation) does not need the keys and should not pay for them. After
// switching it off, the caller must compute every key in Keys() once.
func (e *Engine) SetBulk(on bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.st.bulk = on
	if !on {
		e.st.settleRejections(nil)
	}
	e.refreshSensitive()
}

// PolicyResources lists the policy kinds currently known from CRDs, as the
// resource to watch (the CRD's storage version, else the first served one).
func (e *Engine) PolicyResources() []schema.GroupVersionResource {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.st.att.Resources()
}

// Keys lists every key that has an output object now, sorted.
func (e *Engine) Keys() []Key {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.st.keys()
}

// Compute returns the output for key: *v1alpha1.EffectivePolicy for a
// namespaced key, *v1alpha1.ClusterEffectivePolicy for a cluster key.
// ok=false when no policy reaches any object of that name.
//
// Compute is safe and efficient for concurrent use: callers share one memo
// of contexts and folds (see docs/compute.md), so GOMAXPROCS goroutines
// computing a batch of keys share their work. The returned object is
// read-only: outputs share the bytes of effective specs, their fieldSources
// maps and via lists with each other and with the engine's memo.
func (e *Engine) Compute(key Key) (obj runtime.Object, ok bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.computeWith(key, e.currentMemo())
}

// computeWith computes key with memo m and a pooled session. The caller
// holds e.mu (read).
func (e *Engine) computeWith(key Key, m *fold.Memo) (runtime.Object, bool) {
	s := fold.Acquire(e.st.graph, m)
	defer s.Release()
	return s.Output(key.Namespace, key.Name, e.st.targetNodes(key), e.st.att.SortedKinds())
}

// currentMemo returns the memo, made valid for the current state. The
// caller holds e.mu (read).
func (e *Engine) currentMemo() *fold.Memo {
	if m := e.memo.Load(); m != nil && m.ValidFor(e.memoInputs()) {
		return m // the common case: no lock
	}
	e.memoMu.Lock()
	defer e.memoMu.Unlock()
	m := e.memo.Load().Refresh(e.memoInputs(), !e.memoDropped.Load())
	e.memo.Store(m)
	return m
}

// memoInputs is what the memo's validity and size depend on. The caller
// holds e.mu.
func (e *Engine) memoInputs() fold.MemoInputs {
	st := e.st
	return fold.MemoInputs{
		StructGen: st.structGen, KindsGen: st.kindsGen,
		Nodes: len(st.graph.Objects) + len(st.graph.Virt), Kinds: len(st.att.Kinds()), Policies: len(st.att.Policies()),
	}
}

// DropMemo releases the memoised contexts and folds (they are rebuilt on
// demand). After a full computation the memo is about a third of the
// engine's heap; a caller short of memory can drop it and pay for it on
// the next edits.
func (e *Engine) DropMemo() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.memo.Store(nil)
	e.memoDropped.Store(true) // from now on, memos start small
}

// RecoveredPanics returns how many panics Upsert and Delete have recovered
// from in this process (the last line of defense against malformed input).
// It should stay 0; tests that feed hostile input assert that it does.
func RecoveredPanics() uint64 { return recoveredPanics.Load() }

// ComputeAll feeds objs to a fresh engine and computes every key.
//
//nolint:revive // compute.ComputeAll says at its call sites what compute.All would not.
func ComputeAll(objs []*unstructured.Unstructured, opts Options) (map[Key]runtime.Object, error) {
	e, err := NewEngine(opts)
	if err != nil {
		return nil, err
	}
	e.SetBulk(true) // the keys Upsert returns are not needed here
	// CRDs first, so that policies are recognized whatever the order.
	for _, o := range objs {
		if o != nil && isCRD(o) {
			e.Upsert(o)
		}
	}
	for _, o := range objs {
		if o != nil && !isCRD(o) {
			e.Upsert(o)
		}
	}
	e.SetBulk(false) // settles what bulk mode deferred (whole-policy rejections)
	return e.computeAll(), nil
}

func (e *Engine) computeAll() map[Key]runtime.Object {
	e.mu.RLock()
	defer e.mu.RUnlock()
	keys := e.st.keys()
	objs := make([]runtime.Object, len(keys))
	m := e.currentMemo()
	workqueue.ParallelizeUntil(context.Background(), goruntime.GOMAXPROCS(0), len(keys), func(i int) {
		if o, ok := e.computeWith(keys[i], m); ok {
			objs[i] = o
		}
	})
	out := make(map[Key]runtime.Object, len(keys))
	for i, k := range keys {
		if objs[i] != nil {
			out[k] = objs[i]
		}
	}
	return out
}

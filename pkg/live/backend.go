package live

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/access"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/inputs"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/registry"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/requesttrace"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/review"
)

var (
	_ registry.TraceSource = (*Live)(nil)
	_ review.Source        = (*Live)(nil)
)

// Backend serves one resource from its versioned Store. Reads never
// compute or write: Get and List first wait (within the request's deadline)
// until the worker has applied every change that was pending when they
// arrived, so a client sees its own edits; Watch delegates (the worker
// applies dirty keys within the debounce interval). Before the first full
// computation it serves the Store as restored from the cache.
type Backend struct {
	l          *Live
	store      *outputStore
	namespaced bool
	// reach: the store holds policy reaches, which are built after the
	// first computation; reads wait for them (awaitReaches).
	reach bool
}

// The live layer hands these to the REST layer; the storage does not import
// it, so the fit is checked here (docs/storage.md, "Layering").
var (
	_ registry.Backend      = (*Backend)(nil)
	_ registry.EpochBackend = (*Backend)(nil)
	_ registry.Backend      = (*outputStore)(nil)
	_ registry.EpochBackend = (*outputStore)(nil)
)

// ForeignResourceVersion implements registry.EpochBackend.
func (b *Backend) ForeignResourceVersion(rv uint64) bool {
	return b.store.ForeignResourceVersion(rv)
}

// Get implements registry.Backend.
func (b *Backend) Get(ctx context.Context, namespace, name string) (*encoded.Object, error) {
	if !b.namespaced {
		namespace = ""
	}
	if err := b.await(ctx); err != nil {
		return nil, err
	}
	return b.store.Get(ctx, namespace, name)
}

// List implements registry.Backend.
func (b *Backend) List(ctx context.Context, namespace string) ([]*encoded.Object, uint64, error) {
	if err := b.await(ctx); err != nil {
		return nil, 0, err
	}
	return b.store.List(ctx, namespace)
}

// await makes a read see every change pending when it arrived
// (awaitApplied), and a reach read the reaches of the first computation.
func (b *Backend) await(ctx context.Context) error {
	if b.reach {
		if err := b.l.awaitReaches(ctx); err != nil {
			return err
		}
	}
	return b.l.awaitApplied(ctx)
}

// Watch implements registry.Backend.
func (b *Backend) Watch(ctx context.Context, namespace string, rv uint64) (watch.Interface, error) {
	return b.store.Watch(ctx, namespace, rv)
}

// SensitiveFields exposes the engine's sensitive-field index (descriptor
// sensitiveFields, resources from the CRDs) to the REST layer, which redacts
// those values for callers that may not get the policy kind.
func (l *Live) SensitiveFields() access.SensitiveFields { return sensitiveIndex{l.engine} }

type sensitiveIndex struct{ engine Engine }

func (s sensitiveIndex) SensitiveKind(gk schema.GroupKind) (access.SensitiveKind, bool) {
	sk, ok := s.engine.SensitiveKind(gk)
	if !ok {
		return access.SensitiveKind{}, false
	}
	return access.SensitiveKind{Resource: sk.Resource, Paths: sk.Paths}, true
}

// TraceTopology implements registry.TraceSource: the engine, once the
// outputs are current with every change pending when the call arrived (a
// trace reads the engine's topology and the served outputs, which must
// agree). Before the first full computation there is nothing to trace in.
func (l *Live) TraceTopology(ctx context.Context) (requesttrace.Topology, error) {
	if !l.ready.Load() {
		return nil, fmt.Errorf("the server is computing the effective policies of the cluster; retry in a few seconds")
	}
	if err := l.awaitApplied(ctx); err != nil {
		return nil, err
	}
	return l.engine, nil
}

// Review implements review.Source: the engine's WhatIf on the
// proposal, its objects trimmed as informers trim live inputs (so a
// proposed object that equals the live one changes nothing). The stores,
// their watchers and the cache are not touched; live edits wait for the
// review (it holds the engine's write lock).
func (l *Live) Review(ctx context.Context, p compute.Proposal) ([]compute.Outcome, error) {
	if !l.ready.Load() {
		return nil, fmt.Errorf("the server is computing the effective policies of the cluster; retry in a few seconds")
	}
	trimmed := compute.Proposal{Delete: p.Delete, Apply: make([]*unstructured.Unstructured, len(p.Apply))}
	for i, o := range p.Apply {
		trimmed.Apply[i] = inputs.Trim(o, o.GroupVersionKind())
	}
	timeout := l.reviewTimeout
	if timeout <= 0 {
		timeout = NewOptions().ReviewTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	out, err := l.engine.WhatIfWithin(ctx, trimmed)
	reviewDuration.Observe(time.Since(start).Seconds())
	return out, err
}

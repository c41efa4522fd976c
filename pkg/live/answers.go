package live

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/inputs"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/registry"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/requesttrace"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/review"
)

// Answers serves RequestTraces (registry.TraceSource) and
// EffectivePolicyReviews (review.Source) from the engine itself rather than
// from a Store: neither touches the Stores, their watchers or the cache.
type Answers struct {
	engine Engine
	// reviewTimeout bounds a review's hold of the engine (Options.ReviewTimeout).
	reviewTimeout time.Duration
	// turn is held by the review computing: reviews take turns on the
	// engine here, so that reviewTimeout counts only a review's own hold
	// (not its wait behind others) and a live edit waits for one review
	// at most. Nil: no turns (the engine's lock alone orders them).
	turn chan struct{}
	// ready reports whether the first full computation is done (Live.Ready);
	// awaitApplied waits for the changes pending when a trace arrived
	// (Live.awaitApplied).
	ready        func() bool
	awaitApplied func(context.Context) error
}

var (
	_ registry.TraceSource = (*Answers)(nil)
	_ review.Source        = (*Answers)(nil)
)

// Answers returns the part that serves RequestTraces and
// EffectivePolicyReviews, the source the REST layer takes for both.
func (l *Live) Answers() *Answers { return l.answers }

// TraceTopology implements registry.TraceSource: the engine, once the
// outputs are current with every change pending when the call arrived (a
// trace reads the engine's topology and the served outputs, which must
// agree). Before the first full computation there is nothing to trace in.
func (a *Answers) TraceTopology(ctx context.Context) (requesttrace.Topology, error) {
	if !a.ready() {
		return nil, fmt.Errorf("the server is computing the effective policies of the cluster; retry in a few seconds")
	}
	if err := a.awaitApplied(ctx); err != nil {
		return nil, err
	}
	return a.engine, nil
}

// Review implements review.Source: the engine's WhatIf on the
// proposal, its objects trimmed as informers trim live inputs (so a
// proposed object that equals the live one changes nothing). The stores,
// their watchers and the cache are not touched; live edits wait for the
// review (it holds the engine's write lock).
func (a *Answers) Review(ctx context.Context, p compute.Proposal) ([]compute.Outcome, error) {
	if !a.ready() {
		return nil, fmt.Errorf("the server is computing the effective policies of the cluster; retry in a few seconds")
	}
	trimmed := compute.Proposal{Delete: p.Delete, Apply: make([]*unstructured.Unstructured, len(p.Apply))}
	for i, o := range p.Apply {
		trimmed.Apply[i] = inputs.Trim(o, o.GroupVersionKind())
	}
	timeout := a.reviewTimeout
	if timeout <= 0 {
		timeout = NewOptions().ReviewTimeout
	}
	if a.turn != nil {
		select {
		case a.turn <- struct{}{}:
			defer func() { <-a.turn }()
		case <-ctx.Done():
			return nil, fmt.Errorf("gave up waiting for the reviews before it: %w", ctx.Err())
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	out, err := a.engine.WhatIfWithin(ctx, trimmed)
	reviewDuration.Observe(time.Since(start).Seconds())
	return out, err
}

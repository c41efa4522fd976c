package compute

// What a proposed change would do (docs/spec.md §10): the engine applies the
// proposal to its own state under its write lock, computes the outputs the
// change may affect, and puts every object back as it was before anyone
// else can look. Nothing is copied: a review costs what the edit would.

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/fold"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// ObjectKey names an input object.
type ObjectKey struct {
	Group, Kind, Namespace, Name string
}

// Proposal is a change to review: objects to apply (as they would be
// applied), objects to delete.
type Proposal struct {
	Apply  []*unstructured.Unstructured
	Delete []ObjectKey
}

// Outcome is one output the proposal may change: Before as the current
// state computes it, After as the proposed one would (nil: no output).
type Outcome struct {
	Key           Key
	Before, After runtime.Object
}

// ErrNotReviewable is returned for a proposal the engine cannot review.
var ErrNotReviewable = errors.New("not reviewable")

// ErrReviewTooLarge is returned when computing a proposal's outputs would
// hold the engine longer than the caller allows (WhatIfWithin).
var ErrReviewTooLarge = errors.New("review too large")

// WhatIf computes what p would change. The outputs it returns are computed
// for every key the change may affect (some may be equal before and after).
// A proposed object that exists keeps its creationTimestamp, as a real
// apply would; a new one is the newest of all (now).
// CustomResourceDefinitions cannot be proposed (a policy kind appearing or
// going away is not an edit of the hierarchy), nor objects of kinds the
// engine does not model, nor objects whose namespace does not fit their
// kind's scope: ErrNotReviewable says which.
//
// The engine's write lock is held throughout: reads and edits wait for the
// review, and nothing observes the proposed state.
func (e *Engine) WhatIf(p Proposal) ([]Outcome, error) {
	return e.WhatIfWithin(context.Background(), p)
}

// WhatIfWithin is WhatIf that gives up when ctx ends: the engine is put
// back as it was and the error wraps ErrReviewTooLarge, naming how many
// outputs the proposal reaches. Live edits wait while a review holds the
// engine; ctx bounds that wait.
func (e *Engine) WhatIfWithin(ctx context.Context, p Proposal) ([]Outcome, error) {
	for _, o := range p.Apply {
		if o == nil || isCRD(o) {
			return nil, fmt.Errorf("%w: a CustomResourceDefinition cannot be proposed", ErrNotReviewable)
		}
	}
	for _, d := range p.Delete {
		if d.Group == "apiextensions.k8s.io" && d.Kind == "CustomResourceDefinition" {
			return nil, fmt.Errorf("%w: a CustomResourceDefinition cannot be proposed", ErrNotReviewable)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.st
	if st.bulk {
		return nil, fmt.Errorf("%w: the engine is loading the cluster", ErrNotReviewable)
	}
	if err := st.checkProposal(p); err != nil {
		return nil, err
	}
	changed := make(map[Key]struct{}, len(st.changedPolicies))
	for k := range st.changedPolicies {
		changed[k] = struct{}{}
	}
	sgen, kgen := st.structGen, st.kindsGen
	ks, undo, err := st.propose(p, time.Now())
	if err != nil {
		undoAll(undo)
		st.changedPolicies = changed
		return nil, err
	}
	keys := ks.sorted()
	// A proposal that leaves the graph and the attachment points alone (a
	// policy's values, the common review) keeps every context: the shared
	// memo serves it. Folds it stores for the proposed state carry that
	// state's attachment generations, which never come back (they only
	// grow), so nothing of the proposal is ever read again. A structural
	// proposal gets a memo of its own, so that the shared one is not
	// replaced by one for a state that is about to vanish.
	m := fold.NewMemo(e.memoInputs(), false)
	if st.structGen == sgen && st.kindsGen == kgen {
		m = e.currentMemo()
	}
	after := e.computeKeys(ctx, keys, m)
	undoAll(undo)
	// The policies the proposal touched are as they were: the live layer
	// has nothing to rebuild for them.
	st.changedPolicies = changed
	var before []runtime.Object
	if ctx.Err() == nil {
		before = e.computeKeys(ctx, keys, e.currentMemo())
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: the change reaches %d outputs, more than can be computed in time (%v)", ErrReviewTooLarge, len(keys), err)
	}
	out := make([]Outcome, len(keys))
	for i, k := range keys {
		out[i] = Outcome{Key: k, Before: before[i], After: after[i]}
	}
	return out, nil
}

// checkProposal refuses objects of kinds the engine does not model (a
// proposal of one would change nothing, which is not what its author
// thinks), and scopes that do not fit the kind.
func (st *state) checkProposal(p Proposal) error {
	check := func(what string, gk schema.GroupKind, ns, name string) error {
		namespaced, known := st.scope(gk)
		switch {
		case !known:
			return fmt.Errorf("%w: %s %s %s: neither a policy kind nor part of the Gateway API hierarchy", ErrNotReviewable, what, gk, name)
		case namespaced && ns == "":
			return fmt.Errorf("%w: %s %s %s: the kind is namespaced, the object names no namespace", ErrNotReviewable, what, gk, name)
		case !namespaced && ns != "":
			return fmt.Errorf("%w: %s %s %s: the kind is cluster-scoped, the object names namespace %s", ErrNotReviewable, what, gk, name, ns)
		}
		return nil
	}
	for _, o := range p.Apply {
		if err := check("apply", o.GroupVersionKind().GroupKind(), o.GetNamespace(), o.GetName()); err != nil {
			return err
		}
	}
	for _, d := range p.Delete {
		if err := check("delete", schema.GroupKind{Group: d.Group, Kind: d.Kind}, d.Namespace, d.Name); err != nil {
			return err
		}
	}
	return nil
}

// scope reports whether gk is an input kind of the engine and whether its
// objects are namespaced.
func (st *state) scope(gk schema.GroupKind) (namespaced, known bool) {
	if ki := st.att.Kind(gk); ki != nil {
		return ki.Kind.Namespaced, true
	}
	if a, ok := topologyAppliers[gk]; ok {
		return a.namespaced, true
	}
	return false, false
}

// propose applies p to the state and returns the keys it may affect and
// the steps that undo it, in the order they were done.
func (st *state) propose(p Proposal, now time.Time) (keySet, []func(), error) {
	ks := keySet{}
	var undo []func()
	for _, d := range p.Delete {
		gk := schema.GroupKind{Group: d.Group, Kind: d.Kind}
		orig, err := st.input(gk, d.Namespace, d.Name)
		if err != nil {
			return nil, undo, err
		}
		if orig == nil {
			continue // nothing to delete
		}
		ks.add(st.delete(gk, d.Namespace, d.Name))
		undo = append(undo, func() { st.upsert(orig) })
	}
	for _, o := range p.Apply {
		o = o.DeepCopy()
		gk := o.GroupVersionKind().GroupKind()
		ns, name := o.GetNamespace(), o.GetName()
		orig, err := st.input(gk, ns, name)
		if err != nil {
			return nil, undo, err
		}
		if orig != nil {
			o.SetCreationTimestamp(orig.GetCreationTimestamp())
			undo = append(undo, func() { st.upsert(orig) })
		} else {
			o.SetCreationTimestamp(metav1.NewTime(now))
			undo = append(undo, func() { st.delete(gk, ns, name) })
		}
		ks.add(st.upsert(o))
	}
	return ks, undo, nil
}

// undoAll runs the steps that undo a proposal, last first.
func undoAll(undo []func()) {
	for i := len(undo) - 1; i >= 0; i-- {
		undo[i]()
	}
}

func (ks keySet) add(keys []Key) {
	for _, k := range keys {
		ks[k] = true
	}
}

// computeKeys computes keys with memo m on up to GOMAXPROCS goroutines,
// until ctx ends. The caller holds e.mu.
func (e *Engine) computeKeys(ctx context.Context, keys []Key, m *fold.Memo) []runtime.Object {
	out := make([]runtime.Object, len(keys))
	workqueue.ParallelizeUntil(ctx, goruntime.GOMAXPROCS(0), len(keys), func(i int) {
		if o, ok := e.computeWith(keys[i], m); ok {
			out[i] = o
		}
	})
	return out
}

// input rebuilds the object the engine was last given for gk ns/name from
// what it keeps (policies: spec, labels, creationTimestamp; topology
// objects: spec, decoded, and labels; routes their creationTimestamp), nil
// when there is none. Upserting it puts the engine back as it was.
func (st *state) input(gk schema.GroupKind, ns, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{Object: map[string]interface{}{}}
	u.SetAPIVersion(schema.GroupVersion{Group: gk.Group, Version: "v1"}.String())
	u.SetKind(gk.Kind)
	u.SetName(name)
	if ki := st.att.Kind(gk); ki != nil {
		if !ki.Kind.Namespaced {
			ns = ""
		}
		p := st.att.Policy(semantics.PolicyID{GK: gk, Namespace: ns, Name: name})
		if p == nil {
			return nil, nil
		}
		u.SetNamespace(ns)
		if spec, ok := p.Raw["spec"]; ok {
			u.Object["spec"] = spec
		}
		u.SetLabels(p.Labels)
		u.SetCreationTimestamp(metav1.NewTime(p.Created))
		return u, nil
	}
	a, ok := topologyAppliers[gk]
	if !ok {
		return nil, nil
	}
	if !a.namespaced {
		ns = ""
	}
	n := topology.NodeID{Group: gk.Group, Kind: gk.Kind, Namespace: ns, Name: name}
	stored, present := st.specs[n]
	if !present {
		return nil, nil
	}
	spec, err := stored.decode()
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s: %w", gk, ns, name, err)
	}
	u.SetNamespace(ns)
	if spec != nil {
		u.Object["spec"] = spec
	}
	if topology.IsNamespaceNode(n) {
		u.SetLabels(st.graph.NSLabels[name])
	} else {
		u.SetLabels(st.objLabels[n])
	}
	if r := st.graph.Routes[n]; r != nil {
		u.SetCreationTimestamp(metav1.NewTime(r.Created))
	}
	return u, nil
}

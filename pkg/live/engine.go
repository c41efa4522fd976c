package live

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/requesttrace"
)

// Engine is what the live layer uses of *compute.Engine: the whole of it,
// in one interface the compiler checks, so that a server whose engine
// lacks a method does not build (rather than failing the requests that
// need it). Tests that stand in for the engine embed Engine in their fake
// and override what they exercise.
type Engine interface {
	// Upsert and Delete take the informers' events and return the keys
	// whose output may change; PolicyResources are the policy kinds to
	// watch.
	Upsert(obj *unstructured.Unstructured) []compute.Key
	Delete(gk schema.GroupKind, namespace, name string) []compute.Key
	PolicyResources() []schema.GroupVersionResource
	// SetBulk turns the bulk mode on and off: while on, Upsert and Delete
	// skip the affected-key bookkeeping and return no keys. The live layer
	// feeds the informers' initial lists in bulk mode, since its first full
	// computation recomputes every key anyway.
	SetBulk(on bool)

	// Keys are the keys with an output; Compute computes one.
	Keys() []compute.Key
	Compute(key compute.Key) (runtime.Object, bool)
	// DropMemo drops the memoised folds. After the first full computation
	// the memo holds a fold for every context of the cluster, a large part
	// of the heap; the live layer drops it, since an edit recomputes only
	// the outputs it reaches and rebuilds only their part of the memo.
	// Memory is the tighter budget (docs/benchmarks/README.md).
	DropMemo()

	// Policies, PolicyKeys and TakeChangedPolicies are what policy reaches
	// are built from (reaches.go): the policies named by a key, every
	// policy's key, and the policies whose own state changed since the
	// last call.
	Policies(key compute.Key) []compute.PolicyInfo
	PolicyKeys() []compute.Key
	TakeChangedPolicies() []compute.Key

	// Traces read the engine's topology view (requesttrace.Topology).
	requesttrace.Topology
	// WhatIfWithin answers a review: the proposal applied, computed and
	// undone under the engine's write lock, within ctx.
	WhatIfWithin(ctx context.Context, p compute.Proposal) ([]compute.Outcome, error)
	// SensitiveKind is the descriptors' index of sensitive fields, which
	// the REST layer redacts.
	SensitiveKind(gk schema.GroupKind) (compute.SensitiveKind, bool)
}

var _ Engine = (*compute.Engine)(nil)

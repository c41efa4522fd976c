package gep

// The GEP profile: docs/spec.md §5 as written (GEP-713 and GEP-2649), the default for every policy kind
// whose descriptor names no implementation.

import (
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// Profile is the GEP profile.
type Profile struct{}

// Name implements semantics.Profile.
func (Profile) Name() string { return semantics.GEP }

// MergeSchema (semantics.Profile): lists the CRD marks x-kubernetes-list-type: map merge by their keys.
func (Profile) MergeSchema(_ string, s *apiextv1.JSONSchemaProps, _ string) *merge.Schema {
	return merge.Compile(s)
}

// ReportedStrategy implements semantics.Profile.
func (Profile) ReportedStrategy(_ string, e *semantics.Entry) v1alpha1.MergeStrategy {
	return e.Strategy
}

// Flavor implements semantics.Profile.
func (Profile) Flavor(string, topology.NodeID) string { return "" }

// Rule implements semantics.Profile.
func (Profile) Rule(string) string { return "" }

// Direct (semantics.Profile): the established policy wins whole (docs/spec.md §5.3).
func (Profile) Direct(cands []*semantics.Policy) []*semantics.Policy { return cands[:1] }

// Fold is docs/spec.md §5.4: from the most specific entry upwards, each established entry applies its
// own strategy to what lies below it.
func (Profile) Fold(es []semantics.FoldEntry, _ string) semantics.FoldValue {
	return semantics.FoldValue{Acc: Fold(es)}
}

// Fold is docs/spec.md §5.4 over all the entries of es.
func Fold(es []semantics.FoldEntry) *merge.Value {
	return FoldOf(es, nil)
}

// FoldOf folds the entries of es at the indices idx (in order; nil for all of them).
func FoldOf(es []semantics.FoldEntry, idx []int) *merge.Value {
	n := len(es)
	if idx != nil {
		n = len(idx)
	}
	at := func(j int) int {
		if idx == nil {
			return j
		}
		return idx[j]
	}
	if n == 0 {
		return nil
	}
	last := at(n - 1)
	acc := merge.Build(es[last].Entry.Spec, last, es[last].Entry.Schema)
	for j := n - 2; j >= 0; j-- {
		i := at(j)
		e := es[i].Entry
		switch e.Strategy {
		case v1alpha1.MergeAtomicOverrides:
			acc = merge.Build(e.Spec, i, e.Schema)
		case v1alpha1.MergePatchDefaults:
			acc = merge.Patch(merge.Build(e.Spec, i, e.Schema), acc)
		case v1alpha1.MergePatchOverrides:
			acc = merge.Patch(acc, merge.Build(e.Spec, i, e.Schema))
		default: // AtomicDefaults
			if merge.IsEmpty(acc) {
				acc = merge.Build(e.Spec, i, e.Schema)
			}
		}
	}
	return acc
}

// Reaches implements semantics.Profile.
func (Profile) Reaches(string, topology.NodeID) bool { return true }

// UnnamedRuleSections implements semantics.Profile.
func (Profile) UnnamedRuleSections() bool { return false }

package compute

// The GEP profile: SPEC §5 as written (GEP-713 and GEP-2649), the default for every policy kind
// whose descriptor names no implementation.

import (
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"
)

type gepProfile struct{}

func (gepProfile) name() string { return SemanticsGEP }

// mergeSchema: lists the CRD marks x-kubernetes-list-type: map merge by their keys.
func (gepProfile) mergeSchema(_ string, s *apiextv1.JSONSchemaProps, _ string) *merge.Schema {
	return merge.Compile(s)
}

func (gepProfile) reportedStrategy(e *entry) v1alpha1.MergeStrategy { return e.strategy }

func (gepProfile) flavor(string, nodeID) string { return "" }

func (gepProfile) rule(string) string { return "" }

// direct: the established policy wins whole (SPEC §5.3).
func (gepProfile) direct(cands []*policy) []*policy { return cands[:1] }

// fold is SPEC §5.4: from the most specific entry upwards, each established entry applies its
// own strategy to what lies below it.
func (gepProfile) fold(es []foldEntry, _ string) foldValue {
	return foldValue{acc: gepFold(es)}
}

func gepFold(es []foldEntry) *merge.Value {
	return gepFoldOf(es, nil)
}

// gepFoldOf folds the entries of es at the indices idx (in order; nil for all of them).
func gepFoldOf(es []foldEntry, idx []int) *merge.Value {
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
	acc := merge.Build(es[last].e.spec, last, es[last].e.schema)
	for j := n - 2; j >= 0; j-- {
		i := at(j)
		e := es[i].e
		switch e.strategy {
		case v1alpha1.MergeAtomicOverrides:
			acc = merge.Build(e.spec, i, e.schema)
		case v1alpha1.MergePatchDefaults:
			acc = merge.Patch(merge.Build(e.spec, i, e.schema), acc)
		case v1alpha1.MergePatchOverrides:
			acc = merge.Patch(acc, merge.Build(e.spec, i, e.schema))
		default: // AtomicDefaults
			if merge.IsEmpty(acc) {
				acc = merge.Build(e.spec, i, e.schema)
			}
		}
	}
	return acc
}

func (gepProfile) reaches(string, nodeID) bool { return true }

func (gepProfile) unnamedRuleSections() bool { return false }

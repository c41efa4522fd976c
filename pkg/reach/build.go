package reach

import (
	"cmp"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// Build returns the PolicyReach of key (a ClusterPolicyReach for namespace
// "") from the engine's policies of that name (compute.Engine.Policies) and
// their entries in the outputs (Index.Of); ok=false when there is no policy
// of that name. Entries of a kind with no such policy (an output not yet
// recomputed after the policy went) are left out. Labels are the policies'
// own; where two kinds' policies disagree on a label, the first kind (by
// group and kind) wins.
func Build(key compute.Key, policies []compute.PolicyInfo, entries []Entry) (runtime.Object, bool) {
	if len(policies) == 0 {
		return nil, false
	}
	byKind := map[[2]string][]v1alpha1.Reach{}
	for _, e := range entries {
		k := [2]string{e.Group, e.Kind}
		byKind[k] = append(byKind[k], e.Reach)
	}
	var labels map[string]string
	out := make([]v1alpha1.ReachPolicy, 0, len(policies))
	for _, p := range policies {
		for k, v := range p.Labels {
			if labels == nil {
				labels = map[string]string{}
			}
			if _, set := labels[k]; !set {
				labels[k] = v
			}
		}
		reaches := byKind[[2]string{p.Group, p.Kind}]
		slices.SortFunc(reaches, compareReach)
		rp := v1alpha1.ReachPolicy{Group: p.Group, Kind: p.Kind, Class: p.Class, AttachedTo: p.AttachedTo, Reaches: reaches}
		rp.Summary.Targets = int32(len(reaches))
		for _, r := range reaches {
			switch r.Outcome {
			case v1alpha1.OutcomeEnforced:
				rp.Summary.Enforced++
			case v1alpha1.OutcomePartiallyEnforced:
				rp.Summary.PartiallyEnforced++
			case v1alpha1.OutcomeOverridden:
				rp.Summary.Overridden++
			case v1alpha1.OutcomeConflicted:
				rp.Summary.Conflicted++
			case v1alpha1.OutcomeInvalid:
				rp.Summary.Invalid++
			}
		}
		out = append(out, rp)
	}
	om := metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: labels}
	if key.Namespace == "" {
		return &v1alpha1.ClusterPolicyReach{ObjectMeta: om, Policies: out}, true
	}
	return &v1alpha1.PolicyReach{ObjectMeta: om, Policies: out}, true
}

// compareReach orders reaches by target (group, kind, namespace, name,
// section), then stanza, attachment and outcome, so that equal inputs build
// equal objects whatever order the outputs were indexed in.
func compareReach(a, b v1alpha1.Reach) int {
	return cmp.Or(
		compareRef(a.Target, b.Target),
		cmp.Compare(a.Stanza, b.Stanza),
		compareRef(a.AttachedTo, b.AttachedTo),
		cmp.Compare(a.Outcome, b.Outcome),
		cmp.Compare(a.Message, b.Message),
	)
}

func compareRef(a, b v1alpha1.ObjectReference) int {
	return cmp.Or(
		cmp.Compare(a.Group, b.Group),
		cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.Namespace, b.Namespace),
		cmp.Compare(a.Name, b.Name),
		cmp.Compare(a.SectionName, b.SectionName),
	)
}

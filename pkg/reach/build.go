package reach

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// Build returns the PolicyReach of key (a ClusterPolicyReach for namespace
// "") from the engine's policies of that name (compute.Engine.Policies) and
// what they reach, by kind (Index.Of); ok=false when there is no policy of
// that name. Reaches of a kind with no such policy (an output not yet
// recomputed after the policy went) are left out. Labels are the policies'
// own; where two kinds' policies disagree on a label, the first kind (by
// group and kind) wins. The reaches' slices are sorted in place.
func Build(key compute.Key, policies []compute.PolicyInfo, byKind map[Kind][]v1alpha1.Reach) (runtime.Object, bool) {
	if len(policies) == 0 {
		return nil, false
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
		reaches := byKind[Kind{p.Group, p.Kind}]
		slices.SortFunc(reaches, compareReach)
		rp := v1alpha1.ReachPolicy{Group: p.Group, Kind: p.Kind, Class: p.Class, Semantics: p.Semantics, AttachedTo: p.AttachedTo, Reaches: reaches}
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
// equal objects whatever order the outputs were indexed in. (Not cmp.Or,
// which evaluates every comparison: this runs a million times at start-up.)
func compareReach(a, b v1alpha1.Reach) int {
	if c := compareRef(&a.Target, &b.Target); c != 0 {
		return c
	}
	if c := strings.Compare(string(a.Stanza), string(b.Stanza)); c != 0 {
		return c
	}
	if c := compareRef(&a.AttachedTo, &b.AttachedTo); c != 0 {
		return c
	}
	if c := strings.Compare(string(a.Outcome), string(b.Outcome)); c != 0 {
		return c
	}
	return strings.Compare(a.Message, b.Message)
}

func compareRef(a, b *v1alpha1.ObjectReference) int {
	if c := strings.Compare(a.Group, b.Group); c != 0 {
		return c
	}
	if c := strings.Compare(a.Kind, b.Kind); c != 0 {
		return c
	}
	if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	if c := strings.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	return strings.Compare(a.SectionName, b.SectionName)
}

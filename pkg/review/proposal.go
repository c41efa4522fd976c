package review

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/validation"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// ProposalOf checks a review's spec (validation.ValidateEffectivePolicyReview)
// and decodes it into the proposal the engine reviews. The objects to apply
// are decoded twice, to check them and here: validation is a function of
// the API types alone, as Kubernetes keeps it, and a review's body is at
// most 1 MiB, a fraction of what the engine then does with it.
func ProposalOf(rv *v1alpha1.EffectivePolicyReview) (compute.Proposal, field.ErrorList) {
	if errs := validation.ValidateEffectivePolicyReview(rv); len(errs) > 0 {
		return compute.Proposal{}, errs
	}
	var p compute.Proposal
	for i, raw := range rv.Spec.Apply {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw.Raw); err != nil {
			// Validated above; decoding the same bytes again cannot fail.
			return compute.Proposal{}, field.ErrorList{field.Invalid(field.NewPath("spec", "apply").Index(i), "", "not a Kubernetes object: "+err.Error())}
		}
		p.Apply = append(p.Apply, u)
	}
	for _, d := range rv.Spec.Delete {
		p.Delete = append(p.Delete, compute.ObjectKey{Group: d.Group, Kind: d.Kind, Namespace: d.Namespace, Name: d.Name})
	}
	return p, nil
}

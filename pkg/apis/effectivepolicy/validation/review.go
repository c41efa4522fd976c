package validation

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// ValidateEffectivePolicyReview checks a review's spec: every object to
// apply is a Kubernetes object that names its name; every object to delete
// names its kind and name. Which kinds may be proposed, and their scope, is
// for the engine to check (it knows the policy kinds).
func ValidateEffectivePolicyReview(rv *v1alpha1.EffectivePolicyReview) field.ErrorList {
	var errs field.ErrorList
	applyPath := field.NewPath("spec", "apply")
	for i, raw := range rv.Spec.Apply {
		path := applyPath.Index(i)
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw.Raw); err != nil {
			errs = append(errs, field.Invalid(path, "", "not a Kubernetes object: "+err.Error()))
			continue
		}
		if u.GetName() == "" {
			errs = append(errs, field.Required(path.Child("metadata", "name"), ""))
		}
	}
	deletePath := field.NewPath("spec", "delete")
	for i, d := range rv.Spec.Delete {
		if d.Kind == "" || d.Name == "" {
			errs = append(errs, field.Required(deletePath.Index(i), "kind and name"))
		}
	}
	return errs
}

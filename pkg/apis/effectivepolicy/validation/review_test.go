package validation_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/validation"
)

func TestValidateEffectivePolicyReview(t *testing.T) {
	apply := func(s string) v1alpha1.EffectivePolicyReviewSpec {
		return v1alpha1.EffectivePolicyReviewSpec{Apply: []runtime.RawExtension{{Raw: []byte(s)}}}
	}
	del := func(ref v1alpha1.ReviewObjectReference) v1alpha1.EffectivePolicyReviewSpec {
		return v1alpha1.EffectivePolicyReviewSpec{Delete: []v1alpha1.ReviewObjectReference{ref}}
	}
	cases := []struct {
		name  string
		spec  v1alpha1.EffectivePolicyReviewSpec
		field string // "" = valid
	}{
		{"nothing proposed", v1alpha1.EffectivePolicyReviewSpec{}, ""},
		{"an object", apply(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"s","namespace":"baker"}}`), ""},
		// The kind and its scope are the engine's to check.
		{"an unknown kind", apply(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"}}`), ""},
		{"a delete", del(v1alpha1.ReviewObjectReference{Kind: "Service", Namespace: "baker", Name: "s"}), ""},
		{"not an object", apply(`[1,2]`), "spec.apply[0]"},
		{"no kind", apply(`{"apiVersion":"v1","metadata":{"name":"s"}}`), "spec.apply[0]"},
		{"no name", apply(`{"apiVersion":"v1","kind":"Service","metadata":{"namespace":"baker"}}`), "spec.apply[0].metadata.name"},
		{"a delete without name", del(v1alpha1.ReviewObjectReference{Kind: "Service"}), "spec.delete[0]"},
		{"a delete without kind", del(v1alpha1.ReviewObjectReference{Name: "s"}), "spec.delete[0]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := validation.ValidateEffectivePolicyReview(&v1alpha1.EffectivePolicyReview{Spec: tc.spec})
			if tc.field == "" {
				if len(errs) > 0 {
					t.Fatalf("valid review refused: %v", errs)
				}
				return
			}
			if len(errs) != 1 || errs[0].Field != tc.field {
				t.Errorf("errors %v, want one on %s", errs, tc.field)
			}
		})
	}
}

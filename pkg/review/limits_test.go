package review_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/review"
)

// TestLimits: a review over a bound is refused before anything is decoded
// or the engine asked, with the status a client expects and a message
// naming the bound and the flag that sets it; at a bound it is answered.
func TestLimits(t *testing.T) {
	spec := func(apply, del int) v1alpha1.EffectivePolicyReviewSpec {
		var s v1alpha1.EffectivePolicyReviewSpec
		for i := 0; i < apply; i++ {
			s.Apply = append(s.Apply, runtime.RawExtension{Raw: []byte(service)})
		}
		for i := 0; i < del; i++ {
			s.Delete = append(s.Delete, v1alpha1.ReviewObjectReference{Kind: "Service", Namespace: "baker", Name: "old"})
		}
		return s
	}
	size := int64(len(service))
	cases := []struct {
		name    string
		limits  review.Limits
		spec    v1alpha1.EffectivePolicyReviewSpec
		wantErr func(error) bool // nil: answered
		message []string         // in the error
	}{
		{name: "no bounds: answered", spec: spec(30, 30)},
		{name: "objects at the bound, applies and deletes together", limits: review.Limits{MaxObjects: 4}, spec: spec(2, 2)},
		{name: "one object over: 422 naming the bound and the flag", limits: review.Limits{MaxObjects: 4}, spec: spec(3, 2),
			wantErr: apierrors.IsInvalid, message: []string{"spec: Too many: 5: must have at most 4 items", "--review-max-objects"}},
		{name: "deletes alone count", limits: review.Limits{MaxObjects: 1}, spec: spec(0, 2),
			wantErr: apierrors.IsInvalid, message: []string{"must have at most 1 item"}},
		{name: "bytes at the bound", limits: review.Limits{MaxBytes: 3 * size}, spec: spec(3, 9)},
		{name: "a byte over: 413 naming the size, the bound and the flag", limits: review.Limits{MaxBytes: 3*size - 1}, spec: spec(3, 0),
			wantErr: apierrors.IsRequestEntityTooLargeError, message: []string{fmt.Sprintf("are %d bytes", 3*size), fmt.Sprintf("more than the %d", 3*size-1), "--review-max-bytes"}},
		{name: "deletes weigh no bytes", limits: review.Limits{MaxBytes: 1}, spec: spec(0, 9)},
		{name: "too many objects is said first", limits: review.Limits{MaxObjects: 1, MaxBytes: 1}, spec: spec(2, 0),
			wantErr: apierrors.IsInvalid, message: []string{"--review-max-objects"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := &source{}
			out, err := review.Answer(context.Background(), src, &v1alpha1.EffectivePolicyReview{Spec: tc.spec}, review.Options{Limits: tc.limits})
			if tc.wantErr == nil {
				if err != nil || out == nil || src.asked == nil {
					t.Fatalf("got %v, %v (source asked: %v); want an answer", out, err, src.asked != nil)
				}
				return
			}
			if !tc.wantErr(err) || out != nil || src.asked != nil {
				t.Fatalf("got %v, %v (source asked: %v)", out, err, src.asked != nil)
			}
			for _, m := range tc.message {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not say %q", err, m)
				}
			}
		})
	}
}

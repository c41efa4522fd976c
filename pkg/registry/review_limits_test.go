package registry_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/registry"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/review"
)

// heldReviews answers a review once release is closed, and says on started
// that one arrived.
type heldReviews struct {
	started chan struct{}
	release chan struct{}
}

func (s heldReviews) Review(context.Context, compute.Proposal) ([]compute.Outcome, error) {
	s.started <- struct{}{}
	<-s.release
	return nil, nil
}

// TestReviewRESTLimits: with inFlight reviews being answered, one more is
// answered, refused with 429 and the Retry-After the limits say, or refused
// for its size whatever the load.
func TestReviewRESTLimits(t *testing.T) {
	small := v1alpha1.EffectivePolicyReviewSpec{Apply: []runtime.RawExtension{raw(retry5)}}
	cases := []struct {
		name       string
		limits     registry.ReviewLimits
		inFlight   int
		spec       v1alpha1.EffectivePolicyReviewSpec
		wantErr    func(error) bool // nil: answered
		retryAfter int              // the 429's Retry-After, in seconds
	}{
		{name: "no bound", inFlight: 3, spec: small},
		{name: "a slot left", limits: registry.ReviewLimits{MaxInFlight: 2}, inFlight: 1, spec: small},
		{name: "every slot taken: 429, a review's timeout later", limits: registry.ReviewLimits{MaxInFlight: 2, RetryAfter: 2500 * time.Millisecond}, inFlight: 2, spec: small,
			wantErr: apierrors.IsTooManyRequests, retryAfter: 3},
		{name: "every slot taken, no wait given: 429 in a second", limits: registry.ReviewLimits{MaxInFlight: 1}, inFlight: 1, spec: small,
			wantErr: apierrors.IsTooManyRequests, retryAfter: 1},
		{name: "too large while busy: the size is what is said", limits: registry.ReviewLimits{MaxInFlight: 1, Limits: review.Limits{MaxObjects: 1}}, inFlight: 1,
			spec: v1alpha1.EffectivePolicyReviewSpec{Apply: small.Apply, Delete: []v1alpha1.ReviewObjectReference{{Kind: "Service", Namespace: "baker", Name: "baker"}}}, wantErr: apierrors.IsInvalid},
		{name: "too many bytes", limits: registry.ReviewLimits{Limits: review.Limits{MaxBytes: int64(len(retry5)) - 1}}, spec: small, wantErr: apierrors.IsRequestEntityTooLargeError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := heldReviews{started: make(chan struct{}, tc.inFlight+1), release: make(chan struct{})}
			r := registry.NewReviewREST(src, nil, nil).WithLimits(tc.limits)
			var wg sync.WaitGroup
			defer wg.Wait()
			defer close(src.release)
			for i := 0; i < tc.inFlight; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := r.Create(userCtx("bob"), &v1alpha1.EffectivePolicyReview{Spec: small}, nil, &metav1.CreateOptions{}); err != nil {
						t.Errorf("a review in flight: %v", err)
					}
				}()
				<-src.started
			}
			done := make(chan error, 1)
			go func() {
				_, err := r.Create(userCtx("ana"), &v1alpha1.EffectivePolicyReview{Spec: tc.spec}, nil, &metav1.CreateOptions{})
				done <- err
			}()
			if tc.wantErr == nil {
				<-src.started // it reached the source while the others were held
				return
			}
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("not refused: the review went on to the source")
			}
			if !tc.wantErr(err) {
				t.Fatalf("got %v", err)
			}
			if tc.retryAfter == 0 {
				return
			}
			if s, ok := apierrors.SuggestsClientDelay(err); !ok || s != tc.retryAfter || !strings.Contains(err.Error(), "--max-concurrent-reviews") {
				t.Errorf("retry after %d (%v), want %d, naming the flag: %v", s, ok, tc.retryAfter, err)
			}
		})
	}
}

// TestReviewRESTLimitsReleaseSlots: a slot is freed when its review is
// answered, and when it fails.
func TestReviewRESTLimitsReleaseSlots(t *testing.T) {
	for _, src := range []review.Source{engineReviews{e: nil, err: apierrors.NewServiceUnavailable("computing")}, answered{}} {
		r := registry.NewReviewREST(src, nil, nil).WithLimits(registry.ReviewLimits{MaxInFlight: 1})
		for i := 0; i < 3; i++ {
			if _, err := r.Create(userCtx("ana"), &v1alpha1.EffectivePolicyReview{}, nil, &metav1.CreateOptions{}); apierrors.IsTooManyRequests(err) {
				t.Fatalf("%T, review %d: %v", src, i, err)
			}
		}
	}
}

type answered struct{}

func (answered) Review(context.Context, compute.Proposal) ([]compute.Outcome, error) { return nil, nil }

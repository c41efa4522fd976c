package review_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/review"
)

// source answers every proposal with its outcomes or its error, and keeps
// the proposal it was asked.
type source struct {
	outcomes []compute.Outcome
	err      error
	asked    *compute.Proposal
}

func (s *source) Review(_ context.Context, p compute.Proposal) ([]compute.Outcome, error) {
	s.asked = &p
	return s.outcomes, s.err
}

func output(ns, name, spec string) runtime.Object {
	targets := []v1alpha1.Target{{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Name: name, Policies: []v1alpha1.TargetPolicy{{
		Group: "example.com", Kind: "RetryPolicy", Effective: []v1alpha1.EffectiveSpec{{Spec: runtime.RawExtension{Raw: []byte(spec)}}},
	}}}}
	if ns == "" {
		o := &v1alpha1.ClusterEffectivePolicy{Targets: targets}
		o.Name = name
		return o
	}
	o := &v1alpha1.EffectivePolicy{Targets: targets}
	o.Name, o.Namespace = name, ns
	return o
}

const service = `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s","namespace":"baker"}}`

// TestAnswer: what a review answers for each thing that can happen to it,
// as the server's REST storage and the plugin both get it.
func TestAnswer(t *testing.T) {
	valid := v1alpha1.EffectivePolicyReviewSpec{
		Apply:  []runtime.RawExtension{{Raw: []byte(service)}},
		Delete: []v1alpha1.ReviewObjectReference{{Kind: "Service", Namespace: "baker", Name: "old"}},
	}
	invalid := v1alpha1.EffectivePolicyReviewSpec{Apply: []runtime.RawExtension{{Raw: []byte(`[1]`)}}}
	cases := []struct {
		name     string
		spec     v1alpha1.EffectivePolicyReviewSpec
		source   source
		admit    error
		wantErr  func(error) bool // nil: an answer
		asked    bool             // the source was asked
		admitted bool             // admission ran
		changes  string
	}{
		{name: "an invalid spec: 422, nothing asked", spec: invalid, wantErr: apierrors.IsInvalid},
		{name: "admission refuses: its error, nothing asked", spec: valid, admit: apierrors.NewForbidden(v1alpha1.Resource("effectivepolicyreviews"), "", errors.New("no")),
			wantErr: apierrors.IsForbidden, admitted: true},
		{name: "not reviewable: 422", spec: valid, source: source{err: fmt.Errorf("%w: Deployment", compute.ErrNotReviewable)},
			wantErr: apierrors.IsInvalid, asked: true, admitted: true},
		{name: "too large: 413", spec: valid, source: source{err: fmt.Errorf("%w: 9 outputs", compute.ErrReviewTooLarge)},
			wantErr: apierrors.IsRequestEntityTooLargeError, asked: true, admitted: true},
		{name: "not ready: 503", spec: valid, source: source{err: errors.New("computing")},
			wantErr: apierrors.IsServiceUnavailable, asked: true, admitted: true},
		{name: "changes, sorted; unchanged outputs left out", spec: valid, asked: true, admitted: true,
			source: source{outcomes: []compute.Outcome{
				{Key: compute.Key{Namespace: "baker", Name: "z"}, Before: output("baker", "z", `{"a":1}`), After: output("baker", "z", `{"a":2}`)},
				{Key: compute.Key{Namespace: "baker", Name: "same"}, Before: output("baker", "same", `{"a":1}`), After: output("baker", "same", `{"a":1}`)},
				{Key: compute.Key{Name: "gc"}, Before: output("", "gc", `{"a":1}`)},
				{Key: compute.Key{Namespace: "baker", Name: "a"}, After: output("baker", "a", `{"a":1}`)},
			}},
			changes: "[clustereffectivepolicies /gc Deleted effectivepolicies baker/a Added effectivepolicies baker/z Modified]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			admitted := false
			opts := review.Options{Admit: func(context.Context) error { admitted = true; return tc.admit }}
			src := tc.source
			out, err := review.Answer(context.Background(), &src, &v1alpha1.EffectivePolicyReview{Spec: tc.spec}, opts)
			if (src.asked != nil) != tc.asked || admitted != tc.admitted {
				t.Errorf("asked %v, admitted %v; want %v, %v", src.asked != nil, admitted, tc.asked, tc.admitted)
			}
			if tc.wantErr != nil {
				if !tc.wantErr(err) || out != nil {
					t.Fatalf("got %v, %v", out, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range out.Status.Changes {
				got = append(got, c.Resource+" "+c.Namespace+"/"+c.Name+" "+string(c.Change))
			}
			if s := fmt.Sprint(got); s != tc.changes {
				t.Errorf("changes %s, want %s", s, tc.changes)
			}
			if p := src.asked; len(p.Apply) != 1 || p.Apply[0].GetName() != "s" || len(p.Delete) != 1 || p.Delete[0].Name != "old" {
				t.Errorf("proposal %+v", p)
			}
		})
	}
}

package registry_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/access"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/access/accesstest"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/registry"
)

type engineReviews struct {
	e   *compute.Engine
	err error
}

func (s engineReviews) Review(_ context.Context, p compute.Proposal) ([]compute.Outcome, error) {
	if s.err != nil {
		return nil, s.err
	}
	return s.e.WhatIf(p)
}

func raw(s string) runtime.RawExtension { return runtime.RawExtension{Raw: []byte(s)} }

const retry5 = `{"apiVersion":"example.com/v1","kind":"RetryPolicy","metadata":{"name":"retry-all","namespace":"baker"},
"spec":{"targetRefs":[{"group":"gateway.networking.k8s.io","kind":"HTTPRoute","name":"baker"}],"retries":5}}`

// TestReviewRESTCreate: the changes a proposal would make, as the caller may
// see them, over the engine of traceWorld (Gateway infra/gw, HTTPRoute and
// Service baker/baker, RetryPolicy baker/retry-all on the route).
func TestReviewRESTCreate(t *testing.T) {
	for _, tc := range reviewRESTCreateCases() {
		t.Run(tc.name, func(t *testing.T) { runReviewRESTCreateCase(t, tc) })
	}
}

type reviewRESTCreateCase struct {
	name       string
	namespaces map[string]bool // nil: no authorizer
	redact     bool            // retries is a sensitive field of RetryPolicy
	spec       v1alpha1.EffectivePolicyReviewSpec
	check      func(t *testing.T, s v1alpha1.EffectivePolicyReviewStatus)
}

func reviewRESTCreateCases() []reviewRESTCreateCase {
	return []reviewRESTCreateCase{
		{"a policy's spec changes", nil, false, v1alpha1.EffectivePolicyReviewSpec{Apply: []runtime.RawExtension{raw(retry5)}},
			func(t *testing.T, s v1alpha1.EffectivePolicyReviewStatus) {
				if len(s.Changes) != 1 {
					t.Fatalf("changes %+v", s.Changes)
				}
				c := s.Changes[0]
				if c.Resource != "effectivepolicies" || c.Namespace != "baker" || c.Name != "baker" || c.Change != v1alpha1.ChangeModified {
					t.Errorf("change %+v", c)
				}
				if got := specOfRoute(c.Before.Targets); got != `{"retries":3}` {
					t.Errorf("before %s", got)
				}
				if got := specOfRoute(c.After.Targets); got != `{"retries":5}` {
					t.Errorf("after %s", got)
				}
			}},
		{"the policy is deleted", nil, false, v1alpha1.EffectivePolicyReviewSpec{Delete: []v1alpha1.ReviewObjectReference{{Group: "example.com", Kind: "RetryPolicy", Namespace: "baker", Name: "retry-all"}}},
			func(t *testing.T, s v1alpha1.EffectivePolicyReviewStatus) {
				if len(s.Changes) != 1 || s.Changes[0].Change != v1alpha1.ChangeDeleted || len(s.Changes[0].After.Targets) != 0 || len(s.Changes[0].Before.Targets) != 2 { // the route and its Service share the name
					t.Errorf("changes %+v", s.Changes)
				}
			}},
		{"a Gateway policy is added", nil, false, v1alpha1.EffectivePolicyReviewSpec{Apply: []runtime.RawExtension{raw(`{"apiVersion":"example.com/v1","kind":"RetryPolicy","metadata":{"name":"gw","namespace":"infra"},
"spec":{"targetRefs":[{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"gw"}],"budget":1}}`)}},
			func(t *testing.T, s v1alpha1.EffectivePolicyReviewStatus) {
				var got []string
				for _, c := range s.Changes {
					got = append(got, string(c.Change)+" "+c.Namespace+"/"+c.Name)
				}
				// The Gateway gets one; the route's (and its Service's) changes.
				if strings.Join(got, ", ") != "Modified baker/baker, Added infra/gw" {
					t.Errorf("changes %v", got)
				}
			}},
		// Ana reads baker only (a namespaced view RoleBinding): her
		// manifests hold a policy of infra's Gateway too. Her route's change
		// is named; the Gateway's own EffectivePolicy is counted, never named.
		{"another namespace's object proposed, its change counted", map[string]bool{"baker": true}, false, v1alpha1.EffectivePolicyReviewSpec{Apply: []runtime.RawExtension{raw(`{"apiVersion":"example.com/v1","kind":"RetryPolicy","metadata":{"name":"gw","namespace":"infra"},
"spec":{"targetRefs":[{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"gw"}],"budget":1}}`)}},
			func(t *testing.T, s v1alpha1.EffectivePolicyReviewStatus) {
				if len(s.Changes) != 1 || s.Changes[0].Namespace != "baker" || s.HiddenChanges != 1 {
					t.Errorf("status %+v, want baker's change named and infra's counted", s)
				}
			}},
		{"the application namespace hidden", map[string]bool{"infra": true}, false, v1alpha1.EffectivePolicyReviewSpec{Apply: []runtime.RawExtension{raw(retry5)}},
			func(t *testing.T, s v1alpha1.EffectivePolicyReviewStatus) {
				if len(s.Changes) != 0 || s.HiddenChanges != 1 {
					t.Errorf("status %+v", s)
				}
			}},
		{"the same object again", nil, false, v1alpha1.EffectivePolicyReviewSpec{Apply: []runtime.RawExtension{raw(strings.Replace(retry5, `"retries":5`, `"retries":3`, 1))}},
			func(t *testing.T, s v1alpha1.EffectivePolicyReviewStatus) {
				if len(s.Changes) != 0 {
					t.Errorf("no change expected: %+v", s.Changes)
				}
			}},
		// The change is listed, its sensitive values are not: ana may read
		// the EffectivePolicy, not the RetryPolicy that set them.
		{"a sensitive value redacted", map[string]bool{"baker": true}, true, v1alpha1.EffectivePolicyReviewSpec{Apply: []runtime.RawExtension{raw(retry5)}},
			func(t *testing.T, s v1alpha1.EffectivePolicyReviewStatus) {
				if len(s.Changes) != 1 {
					t.Fatalf("changes %+v", s.Changes)
				}
				for _, side := range []v1alpha1.ReviewTargets{s.Changes[0].Before, s.Changes[0].After} {
					if got := specOfRoute(side.Targets); got != `{"retries":"<redacted>"}` {
						t.Errorf("spec %s, want the value redacted", got)
					}
				}
			}},
	}
}

// runReviewRESTCreateCase creates the review as ana over a fresh engine, with
// the case's authorizer and redactor, and checks its status.
func runReviewRESTCreateCase(t *testing.T, tc reviewRESTCreateCase) {
	_, e := traceServer(t, nil)
	var checker *access.Checker
	if tc.namespaces != nil {
		checker = access.NewChecker(&accesstest.EffectivePolicyAuthorizer{Namespaces: tc.namespaces}, 0)
	}
	var redactor *access.Redactor
	if tc.redact {
		redactor = access.NewRedactorWith(checker, accesstest.SensitiveFields{
			{Group: "example.com", Kind: "RetryPolicy"}: {Resource: schema.GroupResource{Group: "example.com", Resource: "retrypolicies"}, Paths: []string{"/retries"}},
		})
	}
	r := registry.NewReviewREST(engineReviews{e: e}, checker, redactor)
	out, err := r.Create(userCtx("ana"), &v1alpha1.EffectivePolicyReview{Spec: tc.spec}, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tc.check(t, out.(*v1alpha1.EffectivePolicyReview).Status)
}

func specOfRoute(targets []v1alpha1.Target) string {
	for _, t := range targets {
		if t.Kind == "HTTPRoute" && len(t.Policies) > 0 && len(t.Policies[0].Effective) > 0 {
			return string(t.Policies[0].Effective[0].Spec.Raw)
		}
	}
	return ""
}

func TestReviewRESTErrors(t *testing.T) {
	_, e := traceServer(t, nil)
	r := registry.NewReviewREST(engineReviews{e: e}, nil, nil)
	cases := []struct {
		name string
		spec v1alpha1.EffectivePolicyReviewSpec
	}{
		{"not an object", v1alpha1.EffectivePolicyReviewSpec{Apply: []runtime.RawExtension{raw(`[1,2]`)}}},
		{"no name", v1alpha1.EffectivePolicyReviewSpec{Apply: []runtime.RawExtension{raw(`{"apiVersion":"v1","kind":"Service","metadata":{"namespace":"baker"}}`)}}},
		{"an unknown kind", v1alpha1.EffectivePolicyReviewSpec{Apply: []runtime.RawExtension{raw(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"baker"}}`)}}},
		{"a namespaced kind without namespace", v1alpha1.EffectivePolicyReviewSpec{Apply: []runtime.RawExtension{raw(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"}}`)}}},
		{"a delete without name", v1alpha1.EffectivePolicyReviewSpec{Delete: []v1alpha1.ReviewObjectReference{{Kind: "Service"}}}},
	}
	for _, tc := range cases {
		if _, err := r.Create(userCtx("ana"), &v1alpha1.EffectivePolicyReview{Spec: tc.spec}, nil, &metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("%s: want 422, got %v", tc.name, err)
		}
	}
	busy := registry.NewReviewREST(engineReviews{err: errors.New("computing")}, nil, nil)
	if _, err := busy.Create(userCtx("ana"), &v1alpha1.EffectivePolicyReview{}, nil, &metav1.CreateOptions{}); !apierrors.IsServiceUnavailable(err) {
		t.Errorf("not ready: want 503, got %v", err)
	}
}

func TestReviewRESTTooLarge(t *testing.T) {
	r := registry.NewReviewREST(engineReviews{err: fmt.Errorf("%w: 38466 outputs", compute.ErrReviewTooLarge)}, nil, nil)
	_, err := r.Create(userCtx("ana"), &v1alpha1.EffectivePolicyReview{}, nil, &metav1.CreateOptions{})
	if !apierrors.IsRequestEntityTooLargeError(err) || !strings.Contains(err.Error(), "38466 outputs") || !strings.Contains(err.Error(), "--offline") {
		t.Errorf("want 413 naming the size and the way out, got %v", err)
	}
}

//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	v1alpha1 "github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	versioned "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/review"
)

const reviewBoundsNS = "e2e-review-bounds"

// burstRoutes: the routes of each review of a burst, enough for the reviews to overlap.
const burstRoutes = 200

// TestReviewBounds: the server's bounds on reviews (docs/review.md, "Bounds"), at their defaults,
// through kube-apiserver: a review of more objects or bytes than one may propose is refused
// naming the bound; reviews beyond those the server answers at once get 429 with Retry-After;
// and afterwards reviews are answered again.
func TestReviewBounds(t *testing.T) {
	applyColorPolicyCRDs(t)
	createNamespace(t, reviewBoundsNS)
	kubectlApply(t, fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: %[1]s}
spec:
  gatewayClassName: e2e-review
  listeners:
  - {name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: Same}}}
---
apiVersion: colors.example.com/v1
kind: ColorPolicy
metadata: {name: amber, namespace: %[1]s}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  color: amber
`, reviewBoundsNS))
	ctx := context.Background()
	// Any authenticated user may review: the bounds hold for all of them. No client-side rate
	// limit: the burst must arrive at once.
	cfg := restConfig(t)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "e2e-review-bounds-user"}
	cfg.QPS, cfg.Burst = 1000, 2000
	cs, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rc := cs.EffectivepolicyV1alpha1().RESTClient()
	create := func(spec v1alpha1.EffectivePolicyReviewSpec) error {
		body, err := json.Marshal(&v1alpha1.EffectivePolicyReview{TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "EffectivePolicyReview"}, Spec: spec})
		if err != nil {
			t.Fatal(err)
		}
		// No retries: client-go waits out a 429's Retry-After and retries on its own.
		return rc.Post().Resource("effectivepolicyreviews").Body(body).SetHeader("Content-Type", "application/json").MaxRetries(0).Do(ctx).Error()
	}
	eventually(t, 60*time.Second, "a review answered", func() error {
		return create(v1alpha1.EffectivePolicyReviewSpec{Apply: routes(1)})
	})

	checkReviewSizeBounds(t, create)
	checkReviewBurst(t, create)
	// The slots are given back.
	if err := create(v1alpha1.EffectivePolicyReviewSpec{Apply: routes(1)}); err != nil {
		t.Errorf("a review after the bursts: %v", err)
	}
}

// checkReviewSizeBounds: a review of more objects or bytes than one may propose is refused,
// naming the bound and its flag.
func checkReviewSizeBounds(t *testing.T, create func(v1alpha1.EffectivePolicyReviewSpec) error) {
	t.Helper()
	for _, c := range []struct {
		name string
		spec v1alpha1.EffectivePolicyReviewSpec
		want func(error) bool
		says []string
	}{
		{"one object over the bound", v1alpha1.EffectivePolicyReviewSpec{Apply: routes(review.DefaultMaxObjects), Delete: []v1alpha1.ReviewObjectReference{{Kind: "Service", Namespace: reviewBoundsNS, Name: "gone"}}},
			apierrors.IsInvalid, []string{fmt.Sprintf("must have at most %d items", review.DefaultMaxObjects), "--review-max-objects"}},
		{"more bytes than the bound", v1alpha1.EffectivePolicyReviewSpec{Apply: []runtime.RawExtension{colorPolicy("big", strings.Repeat("x", review.DefaultMaxBytes))}},
			apierrors.IsRequestEntityTooLargeError, []string{fmt.Sprintf("more than the %d", review.DefaultMaxBytes), "--review-max-bytes"}},
	} {
		err := create(c.spec)
		if !c.want(err) {
			t.Errorf("%s: got %v", c.name, err)
			continue
		}
		for _, s := range c.says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: %q does not say %q", c.name, err, s)
			}
		}
	}

}

// checkReviewBurst: bursts of concurrent reviews overflow --max-concurrent-reviews: some are
// refused with 429 and a Retry-After, some answered.
func checkReviewBurst(t *testing.T, create func(v1alpha1.EffectivePolicyReviewSpec) error) {
	t.Helper()
	// A burst of reviews, each of routes the Gateway's policy reaches (a turn on the engine
	// each): beyond the server's --max-concurrent-reviews some get 429 and a Retry-After.
	// Bursts are repeated until one overflows (a burst that arrives spread out may not). A
	// review that passes --review-timeout on a loaded machine (413) was computed all the same.
	var refused error
	answered := 0
	for burst := 0; burst < 5 && refused == nil; burst++ {
		errs := make([]error, 24)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = create(v1alpha1.EffectivePolicyReviewSpec{Apply: routes(burstRoutes)})
			}()
		}
		wg.Wait()
		for _, err := range errs {
			switch {
			case err == nil, apierrors.IsRequestEntityTooLargeError(err):
				answered++
			case apierrors.IsTooManyRequests(err):
				refused = err
			default:
				t.Errorf("a review of the burst: %v", err)
			}
		}
	}
	if refused == nil {
		t.Fatalf("no review of five bursts of 24 was refused with 429")
	}
	if s, ok := apierrors.SuggestsClientDelay(refused); !ok || s < 1 || !strings.Contains(refused.Error(), "--max-concurrent-reviews") {
		t.Errorf("429 without a Retry-After, or not naming the bound: %d, %v: %v", s, ok, refused)
	}
	if answered == 0 {
		t.Error("no review of the bursts was answered")
	}
}

// routes returns n new HTTPRoutes of the bounds namespace on its Gateway, as a review's objects.
func routes(n int) []runtime.RawExtension {
	out := make([]runtime.RawExtension, n)
	for i := range out {
		out[i] = runtime.RawExtension{Raw: []byte(fmt.Sprintf(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute",`+
			`"metadata":{"name":"r-%d","namespace":%q},"spec":{"parentRefs":[{"name":"gw"}]}}`, i, reviewBoundsNS))}
	}
	return out
}

// colorPolicy returns a ColorPolicy of the bounds namespace on its Gateway with the color given.
func colorPolicy(name, color string) runtime.RawExtension {
	return runtime.RawExtension{Raw: []byte(fmt.Sprintf(`{"apiVersion":"colors.example.com/v1","kind":"ColorPolicy",`+
		`"metadata":{"name":%q,"namespace":%q},"spec":{"targetRefs":[{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"gw"}],"color":%q}}`,
		name, reviewBoundsNS, color))}
}

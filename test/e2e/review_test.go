//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	v1alpha1 "github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	epclient "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned/typed/effectivepolicy/v1alpha1"
)

const (
	reviewInfra = "e2e-review-infra"
	reviewApp   = "e2e-review-app"
)

// TestEffectivePolicyReview: what a change would do (docs/spec.md §10) through the real kube-apiserver:
// kubectl create -o json prints the changes with before and after; nothing is served or
// watched differently meanwhile; a caller who may read only the application namespace sees its
// change and a count of the rest; bad proposals get 422.
func TestEffectivePolicyReview(t *testing.T) {
	applyColorPolicyCRDs(t)
	createNamespace(t, reviewInfra)
	createNamespace(t, reviewApp)
	kubectlApply(t, fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: %[1]s}
spec:
  gatewayClassName: e2e-review
  listeners:
  - {name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app, namespace: %[2]s}
spec:
  parentRefs: [{name: gw, namespace: %[1]s}]
---
apiVersion: colors.example.com/v1
kind: ColorPolicy
metadata: {name: amber, namespace: %[1]s}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  color: amber
`, reviewInfra, reviewApp))
	ctx := context.Background()
	cs := clientset(t, "").EffectivepolicyV1alpha1()
	eventually(t, 60*time.Second, "the route's EffectivePolicy", func() error {
		_, err := cs.EffectivePolicies(reviewApp).Get(ctx, "app", metav1.GetOptions{})
		return err
	})
	list, err := cs.EffectivePolicies("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.EffectivePolicies("").Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	// The Gateway's policy turns teal: the Gateway's and the route's EffectivePolicies change.
	checkTealReview(t)
	// Nothing served changed: no watch event, and the route still says amber.
	checkNothingServedChanged(ctx, t, cs, w)

	// Deleting the policy, as a developer of the application namespace sees it.
	checkDeveloperReview(ctx, t)

	// Bad proposals.
	checkBadReviews(ctx, t, cs)
}

// checkTealReview creates, with kubectl, a review of the Gateway's policy
// turned teal: the Gateway's and the route's EffectivePolicies change from
// amber to teal.
func checkTealReview(t *testing.T) {
	t.Helper()
	review := fmt.Sprintf(`apiVersion: effectivepolicy.dev/v1alpha1
kind: EffectivePolicyReview
spec:
  apply:
  - apiVersion: colors.example.com/v1
    kind: ColorPolicy
    metadata: {name: amber, namespace: %s}
    spec:
      targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
      color: teal
`, reviewInfra)
	stdout, stderr, err := kubectlRaw([]byte(review), "create", "-f", "-", "-o", "json")
	if err != nil {
		t.Fatalf("kubectl create -f review: %v\n%s", err, stderr)
	}
	var rv v1alpha1.EffectivePolicyReview
	if err := json.Unmarshal([]byte(stdout), &rv); err != nil {
		t.Fatal(err)
	}
	got := changesOf(rv.Status)
	if want := "Modified " + reviewApp + "/app, Modified " + reviewInfra + "/gw"; got != want {
		t.Fatalf("changes %q, want %q", got, want)
	}
	for _, c := range rv.Status.Changes {
		if !strings.Contains(targetsJSON(c.Before), `"color":"amber"`) || !strings.Contains(targetsJSON(c.After), `"color":"teal"`) || strings.Contains(targetsJSON(c.After), `"color":"amber"`) {
			t.Errorf("%s/%s: before %s after %s", c.Namespace, c.Name, targetsJSON(c.Before), targetsJSON(c.After))
		}
	}
}

// checkNothingServedChanged: while reviews ran, w saw no event and the route
// still says amber.
func checkNothingServedChanged(ctx context.Context, t *testing.T, cs epclient.EffectivepolicyV1alpha1Interface, w watch.Interface) {
	t.Helper()
	select {
	case e := <-w.ResultChan():
		t.Errorf("a watch event during a review: %v", e.Type)
	case <-time.After(2 * time.Second):
	}
	if ep, err := cs.EffectivePolicies(reviewApp).Get(ctx, "app", metav1.GetOptions{}); err != nil || !strings.Contains(targetsJSON(v1alpha1.ReviewTargets{Targets: ep.Targets}), `"color":"amber"`) {
		t.Errorf("the served route changed: %v", err)
	}

}

// checkDeveloperReview: a developer of the application namespace reviews the
// policy's deletion and sees the route's change, the Gateway's hidden.
func checkDeveloperReview(ctx context.Context, t *testing.T) {
	t.Helper()
	// view in the namespace is all she has: every authenticated user may create reviews.
	kubectl(t, "create", "rolebinding", "dev", "--clusterrole=view", "--user=e2e-review-dev", "-n", reviewApp)
	dev := clientset(t, "e2e-review-dev").EffectivepolicyV1alpha1()
	var del *v1alpha1.EffectivePolicyReview
	eventually(t, 30*time.Second, "the developer's review", func() error {
		var err error
		del, err = dev.EffectivePolicyReviews().Create(ctx, &v1alpha1.EffectivePolicyReview{Spec: v1alpha1.EffectivePolicyReviewSpec{
			Delete: []v1alpha1.ReviewObjectReference{{Group: "colors.example.com", Kind: "ColorPolicy", Namespace: reviewInfra, Name: "amber"}},
		}}, metav1.CreateOptions{})
		return err
	})
	if got := changesOf(del.Status); got != "Deleted "+reviewApp+"/app" || del.Status.HiddenChanges < 1 {
		t.Errorf("developer's view: %q, hidden %d", got, del.Status.HiddenChanges)
	}

}

// checkBadReviews: proposals that cannot be reviewed are refused with 422.
func checkBadReviews(ctx context.Context, t *testing.T, cs epclient.EffectivepolicyV1alpha1Interface) {
	t.Helper()
	for name, spec := range map[string]v1alpha1.EffectivePolicyReviewSpec{
		"an unknown kind": {Apply: []runtime.RawExtension{{Raw: []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"x"}}`)}}},
		"no name":         {Apply: []runtime.RawExtension{{Raw: []byte(`{"apiVersion":"v1","kind":"Service","metadata":{"namespace":"x"}}`)}}},
		"a CRD":           {Apply: []runtime.RawExtension{{Raw: []byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"a.b.c"}}`)}}},
	} {
		if _, err := cs.EffectivePolicyReviews().Create(ctx, &v1alpha1.EffectivePolicyReview{Spec: spec}, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("%s: want 422, got %v", name, err)
		}
	}
}

func changesOf(s v1alpha1.EffectivePolicyReviewStatus) string {
	var out []string
	for _, c := range s.Changes {
		out = append(out, string(c.Change)+" "+c.Namespace+"/"+c.Name)
	}
	return strings.Join(out, ", ")
}

func targetsJSON(t v1alpha1.ReviewTargets) string {
	b, _ := json.Marshal(t)
	return string(b)
}

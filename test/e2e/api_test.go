//go:build e2e

package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const groupVersion = "effectivepolicy.dev/v1alpha1"

// The group is discoverable (aggregated discovery and the per-group document), read-only, with the
// right scopes.
func TestDiscovery(t *testing.T) {
	out := kubectl(t, "api-resources", "--api-group=effectivepolicy.dev", "-o", "name")
	for _, want := range []string{"effectivepolicies.effectivepolicy.dev", "clustereffectivepolicies.effectivepolicy.dev",
		"policyreaches.effectivepolicy.dev", "clusterpolicyreaches.effectivepolicy.dev"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl api-resources does not list %s:\n%s", want, out)
		}
	}
	if out := kubectl(t, "api-versions"); !strings.Contains(out, groupVersion) {
		t.Errorf("kubectl api-versions does not list %s:\n%s", groupVersion, out)
	}

	rl, err := clientset(t, "").Discovery().ServerResourcesForGroupVersion(groupVersion)
	if err != nil {
		t.Fatalf("discovery of %s: %v", groupVersion, err)
	}
	want := map[string]struct {
		kind       string
		namespaced bool
	}{
		"effectivepolicies":        {"EffectivePolicy", true},
		"clustereffectivepolicies": {"ClusterEffectivePolicy", false},
		"policyreaches":            {"PolicyReach", true},
		"clusterpolicyreaches":     {"ClusterPolicyReach", false},
	}
	seen := map[string]bool{}
	for _, r := range rl.APIResources {
		w, ok := want[r.Name]
		if !ok {
			continue // subresources, if any
		}
		seen[r.Name] = true
		if r.Kind != w.kind || r.Namespaced != w.namespaced {
			t.Errorf("%s: kind %q namespaced %v, want %q %v", r.Name, r.Kind, r.Namespaced, w.kind, w.namespaced)
		}
		verbs := map[string]bool{}
		for _, v := range r.Verbs {
			verbs[v] = true
		}
		for _, v := range []string{"get", "list", "watch"} {
			if !verbs[v] {
				t.Errorf("%s: verb %s missing from %v", r.Name, v, r.Verbs)
			}
		}
		for _, v := range []string{"create", "update", "patch", "delete", "deletecollection"} {
			if verbs[v] {
				t.Errorf("%s: read-only resource advertises verb %s (%v)", r.Name, v, r.Verbs)
			}
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("discovery of %s lacks %s: %+v", groupVersion, name, rl.APIResources)
		}
	}
	// The review kinds are created only, cluster-scoped (docs/spec.md §2, §9, §10).
	reviews := map[string]string{"requesttraces": "RequestTrace", "effectivepolicyreviews": "EffectivePolicyReview"}
	for _, r := range rl.APIResources {
		kind, ok := reviews[r.Name]
		if !ok {
			continue
		}
		delete(reviews, r.Name)
		if r.Kind != kind || r.Namespaced || strings.Join(r.Verbs, ",") != "create" {
			t.Errorf("%s: %+v", r.Name, r)
		}
	}
	if len(reviews) > 0 {
		t.Errorf("discovery of %s lacks %v", groupVersion, reviews)
	}
}

// OpenAPI is served: kubectl explain describes the fields.
func TestExplain(t *testing.T) {
	out := kubectl(t, "explain", "effectivepolicy.targets")
	for _, want := range []string{"EffectivePolicy", "targets", "policies", "kind"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl explain effectivepolicy.targets lacks %q:\n%s", want, out)
		}
	}
	out = kubectl(t, "explain", "clustereffectivepolicy")
	if !strings.Contains(out, "ClusterEffectivePolicy") {
		t.Errorf("kubectl explain clustereffectivepolicy:\n%s", out)
	}
	// OpenAPI v3 too.
	kubectl(t, "get", "--raw", "/openapi/v3/apis/effectivepolicy.dev/v1alpha1")
}

// A user with the built-in view role in one namespace reads effective policies there, and is
// forbidden elsewhere and cluster-wide (the project's reader roles are aggregated into view).
func TestRBAC(t *testing.T) {
	const user = "e2e-viewer"
	createNamespace(t, "e2e-rbac-a")
	createNamespace(t, "e2e-rbac-b")
	kubectl(t, "create", "rolebinding", "viewer", "--clusterrole=view", "--user="+user, "-n", "e2e-rbac-a")
	eventually(t, 30*time.Second, "view role grants effectivepolicies", func() error {
		_, _, err := kubectlRaw(nil, "auth", "can-i", "list", "effectivepolicies.effectivepolicy.dev", "-n", "e2e-rbac-a", "--as", user)
		return err
	})

	ctx := context.Background()
	cs := clientset(t, user).EffectivepolicyV1alpha1()
	if _, err := cs.EffectivePolicies("e2e-rbac-a").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("list in own namespace: %v", err)
	}
	if _, err := cs.EffectivePolicies("e2e-rbac-a").Get(ctx, "nothing-here", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get of a missing name in own namespace: want NotFound, got %v", err)
	}
	if _, err := cs.EffectivePolicies("e2e-rbac-b").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("list in another namespace: want Forbidden, got %v", err)
	}
	if _, err := cs.EffectivePolicies("e2e-rbac-b").Get(ctx, "anything", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("get in another namespace: want Forbidden, got %v", err)
	}
	if _, err := cs.EffectivePolicies("").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("list across all namespaces: want Forbidden, got %v", err)
	}
	if _, err := cs.ClusterEffectivePolicies().List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("list clustereffectivepolicies: want Forbidden, got %v", err)
	}
	if w, err := cs.EffectivePolicies("e2e-rbac-b").Watch(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		if w != nil {
			w.Stop()
		}
		t.Errorf("watch in another namespace: want Forbidden, got %v", err)
	}

	// The same through kubectl.
	kubectl(t, "get", "effectivepolicies", "-n", "e2e-rbac-a", "--as", user)
	_, errOut, err := kubectlRaw(nil, "get", "effectivepolicies", "-n", "e2e-rbac-b", "--as", user)
	if err == nil || !strings.Contains(errOut, "Forbidden") {
		t.Errorf("kubectl get effectivepolicies -n e2e-rbac-b --as %s: want Forbidden, got err=%v stderr=%s", user, err, errOut)
	}
	_, errOut, err = kubectlRaw(nil, "get", "effectivepolicies", "-A", "--as", user)
	if err == nil || !strings.Contains(errOut, "Forbidden") {
		t.Errorf("kubectl get effectivepolicies -A --as %s: want Forbidden, got err=%v stderr=%s", user, err, errOut)
	}
}

// A name that does not exist answers 404 NotFound with a proper Status.
func TestGetMissingIsNotFound(t *testing.T) {
	_, errOut, err := kubectlRaw(nil, "get", "effectivepolicy", "no-such-object", "-n", "default")
	if err == nil || !strings.Contains(errOut, "NotFound") {
		t.Errorf("kubectl get effectivepolicy no-such-object: want NotFound, got err=%v stderr=%s", err, errOut)
	}
	_, errOut, err = kubectlRaw(nil, "get", "clustereffectivepolicy", "no-such-object")
	if err == nil || !strings.Contains(errOut, "NotFound") {
		t.Errorf("kubectl get clustereffectivepolicy no-such-object: want NotFound, got err=%v stderr=%s", err, errOut)
	}

	ctx := context.Background()
	cs := clientset(t, "").EffectivepolicyV1alpha1()
	_, err = cs.EffectivePolicies("default").Get(ctx, "no-such-object", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("clientset get: want NotFound, got %v", err)
	}
	st := err.(apierrors.APIStatus).Status()
	if st.Code != http.StatusNotFound || st.Details == nil || st.Details.Name != "no-such-object" ||
		st.Details.Group != "effectivepolicy.dev" || st.Details.Kind != "effectivepolicies" {
		t.Errorf("NotFound status lacks details: %+v", st)
	}
	if _, err := cs.ClusterEffectivePolicies().Get(ctx, "no-such-object", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("clientset get clustereffectivepolicy: want NotFound, got %v", err)
	}
}

// The API is read-only: kubectl create is refused with 405 MethodNotAllowed, and so are the other
// write verbs.
func TestWritesAreRefused(t *testing.T) {
	const obj = `apiVersion: effectivepolicy.dev/v1alpha1
kind: EffectivePolicy
metadata: {name: forged, namespace: default}
targets: [{group: "", kind: Service, name: forged}]
`
	_, errOut, err := kubectlRaw([]byte(obj), "create", "-f", "-")
	if err == nil || !strings.Contains(errOut, "MethodNotAllowed") {
		t.Errorf("kubectl create: want MethodNotAllowed, got err=%v stderr=%s", err, errOut)
	}

	ctx := context.Background()
	rc := clientset(t, "").EffectivepolicyV1alpha1().RESTClient()
	body := []byte(`{"apiVersion":"effectivepolicy.dev/v1alpha1","kind":"EffectivePolicy","metadata":{"name":"forged","namespace":"default"}}`)
	cbody := []byte(`{"apiVersion":"effectivepolicy.dev/v1alpha1","kind":"ClusterEffectivePolicy","metadata":{"name":"forged"}}`)
	var code int
	for _, c := range []struct {
		name string
		do   func() error
	}{
		{"POST effectivepolicies", func() error {
			return rc.Post().Namespace("default").Resource("effectivepolicies").Body(body).SetHeader("Content-Type", "application/json").Do(ctx).StatusCode(&code).Error()
		}},
		{"PUT effectivepolicies/forged", func() error {
			return rc.Put().Namespace("default").Resource("effectivepolicies").Name("forged").Body(body).SetHeader("Content-Type", "application/json").Do(ctx).StatusCode(&code).Error()
		}},
		{"PATCH effectivepolicies/forged", func() error {
			return rc.Patch("application/merge-patch+json").Namespace("default").Resource("effectivepolicies").Name("forged").Body([]byte(`{}`)).Do(ctx).StatusCode(&code).Error()
		}},
		{"DELETE effectivepolicies/forged", func() error {
			return rc.Delete().Namespace("default").Resource("effectivepolicies").Name("forged").Do(ctx).StatusCode(&code).Error()
		}},
		{"DELETE effectivepolicies (collection)", func() error {
			return rc.Delete().Namespace("default").Resource("effectivepolicies").Do(ctx).StatusCode(&code).Error()
		}},
		{"POST clustereffectivepolicies", func() error {
			return rc.Post().Resource("clustereffectivepolicies").Body(cbody).SetHeader("Content-Type", "application/json").Do(ctx).StatusCode(&code).Error()
		}},
	} {
		code = 0
		err := c.do()
		if !apierrors.IsMethodNotSupported(err) || code != http.StatusMethodNotAllowed {
			t.Errorf("%s: want 405 MethodNotAllowed, got %d %v", c.name, code, err)
		}
	}
}

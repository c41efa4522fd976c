package integration

import (
	"context"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	clientset "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned"
)

func newClient(t *testing.T) *clientset.Clientset {
	t.Helper()
	cs, err := clientset.NewForConfig(baseConfig)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func target(kind, name string, policies ...v1alpha1.TargetPolicy) v1alpha1.Target {
	return v1alpha1.Target{Group: "gateway.networking.k8s.io", Kind: kind, Name: name, Policies: policies}
}

func policyKind(kind string, sources ...string) v1alpha1.TargetPolicy {
	p := v1alpha1.TargetPolicy{Group: "example.com", Kind: kind, Class: v1alpha1.ClassInherited}
	for _, s := range sources {
		ns, name, _ := strings.Cut(s, "/")
		p.Sources = append(p.Sources, v1alpha1.PolicySource{
			Namespace: ns, Name: name, Stanza: v1alpha1.StanzaDefaults,
			MergeStrategy: v1alpha1.MergeAtomicDefaults, Outcome: v1alpha1.OutcomeEnforced,
		})
	}
	p.Effective = []v1alpha1.EffectiveSpec{{Spec: runtime.RawExtension{Raw: []byte(`{"retries":3}`)}}}
	return p
}

func ep(ns, name string, labels map[string]string, targets ...v1alpha1.Target) change {
	return change{Namespace: ns, Name: name, Object: encoded.MustNew(&v1alpha1.EffectivePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Targets:    targets,
	})}
}

func del(ns, name string) change { return change{Namespace: ns, Name: name} }

func names(items []v1alpha1.EffectivePolicy) []string {
	var out []string
	for _, i := range items {
		out = append(out, i.Namespace+"/"+i.Name)
	}
	sort.Strings(out)
	return out
}

func TestGet(t *testing.T) {
	ctx := ctxFor(t)
	cs := newClient(t)
	rv, _ := epStore.Apply([]change{ep("get", "baker", nil,
		target("HTTPRoute", "baker", policyKind("RetryPolicy", "get/retry-all")))})
	cepStore.Apply([]change{{Name: "get-gc", Object: encoded.MustNew(&v1alpha1.ClusterEffectivePolicy{
		Targets: []v1alpha1.Target{target("GatewayClass", "get-gc")},
	})}})

	got, err := cs.EffectivepolicyV1alpha1().EffectivePolicies("get").Get(ctx, "baker", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion != strconv.FormatUint(rv, 10) || got.UID == "" || got.CreationTimestamp.IsZero() {
		t.Errorf("metadata not filled in: %+v", got.ObjectMeta)
	}
	if len(got.Targets) != 1 || got.Targets[0].Policies[0].Sources[0].Name != "retry-all" ||
		string(got.Targets[0].Policies[0].Effective[0].Spec.Raw) != `{"retries":3}` {
		t.Errorf("unexpected targets: %+v", got.Targets)
	}
	cgot, err := cs.EffectivepolicyV1alpha1().ClusterEffectivePolicies().Get(ctx, "get-gc", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cgot.Namespace != "" || cgot.Targets[0].Kind != "GatewayClass" {
		t.Errorf("unexpected cluster object: %+v", cgot)
	}

	for _, tc := range []struct {
		name string
		get  func() error
		kind string
	}{
		{"missing name", func() error {
			_, err := cs.EffectivepolicyV1alpha1().EffectivePolicies("get").Get(ctx, "nope", metav1.GetOptions{})
			return err
		}, "effectivepolicies"},
		{"other namespace", func() error {
			_, err := cs.EffectivepolicyV1alpha1().EffectivePolicies("elsewhere").Get(ctx, "baker", metav1.GetOptions{})
			return err
		}, "effectivepolicies"},
		{"cluster", func() error {
			_, err := cs.EffectivepolicyV1alpha1().ClusterEffectivePolicies().Get(ctx, "nope", metav1.GetOptions{})
			return err
		}, "clustereffectivepolicies"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.get()
			if !apierrors.IsNotFound(err) {
				t.Fatalf("want NotFound, got %v", err)
			}
			status := err.(apierrors.APIStatus).Status()
			if status.Code != http.StatusNotFound || status.Details == nil ||
				status.Details.Group != "effectivepolicy.dev" || status.Details.Kind != tc.kind {
				t.Errorf("unexpected status: %+v", status)
			}
		})
	}
}

func TestList(t *testing.T) {
	ctx := ctxFor(t)
	cs := newClient(t)
	epStore.Apply([]change{
		ep("list-a", "one", map[string]string{"tier": "web"}, target("HTTPRoute", "one")),
		ep("list-a", "two", map[string]string{"tier": "db"}, target("Service", "two")),
		ep("list-b", "one", map[string]string{"tier": "web"}, target("Gateway", "one")),
	})
	for _, tc := range []struct {
		name      string
		namespace string
		opts      metav1.ListOptions
		want      []string
		badReq    bool
	}{
		{name: "namespace", namespace: "list-a", want: []string{"list-a/one", "list-a/two"}},
		{name: "label", namespace: "list-a", opts: metav1.ListOptions{LabelSelector: "tier=web"}, want: []string{"list-a/one"}},
		{name: "label all namespaces", opts: metav1.ListOptions{LabelSelector: "tier=web"}, want: []string{"list-a/one", "list-b/one"}},
		{name: "label set", opts: metav1.ListOptions{LabelSelector: "tier in (web,db),tier!=web"}, want: []string{"list-a/two"}},
		{name: "field name", opts: metav1.ListOptions{FieldSelector: "metadata.name=one"}, want: []string{"list-a/one", "list-b/one"}},
		{name: "field namespace", opts: metav1.ListOptions{FieldSelector: "metadata.namespace=list-b"}, want: []string{"list-b/one"}},
		{name: "field and label", opts: metav1.ListOptions{FieldSelector: "metadata.name!=two", LabelSelector: "tier"}, want: []string{"list-a/one", "list-b/one"}},
		{name: "unsupported field", opts: metav1.ListOptions{FieldSelector: "spec.foo=bar"}, badReq: true},
		{name: "resourceVersion 0", namespace: "list-b", opts: metav1.ListOptions{ResourceVersion: "0"}, want: []string{"list-b/one"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list, err := cs.EffectivepolicyV1alpha1().EffectivePolicies(tc.namespace).List(ctx, tc.opts)
			if tc.badReq {
				if !apierrors.IsBadRequest(err) {
					t.Fatalf("want BadRequest, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if list.ResourceVersion == "" {
				t.Error("list has no resourceVersion")
			}
			var got []string
			for _, n := range names(list.Items) {
				if strings.HasPrefix(n, "list-") {
					got = append(got, n)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			for _, i := range list.Items {
				if i.ResourceVersion == "" {
					t.Errorf("%s has no resourceVersion", i.Name)
				}
			}
		})
	}

	t.Run("watch with an unsupported field", func(t *testing.T) {
		_, err := cs.EffectivepolicyV1alpha1().EffectivePolicies("list-a").Watch(ctx, metav1.ListOptions{FieldSelector: "targets.kind=Gateway"})
		if !apierrors.IsBadRequest(err) {
			t.Fatalf("want BadRequest, got %v", err)
		}
	})

	t.Run("future resourceVersion", func(t *testing.T) {
		future := strconv.FormatUint(epStore.ResourceVersion()+100, 10)
		// No retries: the server asks the client to retry in a second, as the watch cache does.
		err := cs.EffectivepolicyV1alpha1().RESTClient().Get().Namespace("list-a").Resource("effectivepolicies").
			Param("resourceVersion", future).MaxRetries(0).Do(ctx).Error()
		if !apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
			t.Errorf("want too large resource version, got %v", err)
		}
	})
}

func TestWriteVerbsNotAllowed(t *testing.T) {
	ctx := ctxFor(t)
	rc := newClient(t).EffectivepolicyV1alpha1().RESTClient()
	epStore.Apply([]change{ep("write", "a", nil)})
	body := []byte(`{"apiVersion":"effectivepolicy.dev/v1alpha1","kind":"EffectivePolicy","metadata":{"name":"a","namespace":"write"}}`)
	cbody := []byte(`{"apiVersion":"effectivepolicy.dev/v1alpha1","kind":"ClusterEffectivePolicy","metadata":{"name":"a"}}`)
	for _, tc := range []struct {
		verb, namespace, resource, name string
		patch                           types.PatchType
		body                            []byte
	}{
		{"POST", "write", "effectivepolicies", "", "", body},
		{"PUT", "write", "effectivepolicies", "a", "", body},
		{"PATCH", "write", "effectivepolicies", "a", types.MergePatchType, []byte(`{"metadata":{"labels":{"a":"b"}}}`)},
		{"PATCH", "write", "effectivepolicies", "a", types.ApplyYAMLPatchType, body},
		{"DELETE", "write", "effectivepolicies", "a", "", nil},
		{"DELETE", "write", "effectivepolicies", "", "", nil},
		{"POST", "", "clustereffectivepolicies", "", "", cbody},
		{"PUT", "", "clustereffectivepolicies", "a", "", cbody},
		{"DELETE", "", "clustereffectivepolicies", "a", "", nil},
		{"POST", "write", "policyreaches", "", "", []byte(`{"apiVersion":"effectivepolicy.dev/v1alpha1","kind":"PolicyReach","metadata":{"name":"a","namespace":"write"}}`)},
		{"DELETE", "write", "policyreaches", "a", "", nil},
		{"POST", "", "clusterpolicyreaches", "", "", []byte(`{"apiVersion":"effectivepolicy.dev/v1alpha1","kind":"ClusterPolicyReach","metadata":{"name":"a"}}`)},
		// A trace is only created (a path with a name is no resource: 404).
		{"GET", "", "requesttraces", "", "", nil},
		{"DELETE", "", "requesttraces", "", "", nil},
		{"GET", "", "effectivepolicyreviews", "", "", nil},
	} {
		t.Run(tc.verb+" "+tc.resource+"/"+tc.name+string(tc.patch), func(t *testing.T) {
			req := rc.Verb(tc.verb).Resource(tc.resource)
			if tc.namespace != "" {
				req = req.Namespace(tc.namespace)
			}
			if tc.name != "" {
				req = req.Name(tc.name)
			}
			if tc.patch != "" {
				req = req.SetHeader("Content-Type", string(tc.patch))
				if tc.patch == types.ApplyYAMLPatchType {
					req = req.Param("fieldManager", "test")
				}
			}
			if tc.body != nil {
				req = req.Body(tc.body)
			}
			err := req.Do(ctx).Error()
			if !apierrors.IsMethodNotSupported(err) {
				t.Fatalf("want 405 MethodNotAllowed, got %v", err)
			}
			if code := err.(apierrors.APIStatus).Status().Code; code != http.StatusMethodNotAllowed {
				t.Errorf("code %d", code)
			}
		})
	}
	if _, err := epStore.Get(ctx, "write", "a"); err != nil {
		t.Errorf("object changed by a write: %v", err)
	}
}

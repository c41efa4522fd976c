package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	clientset "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned"
	informers "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/informers/externalversions"
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

// nextEvent reads one event or fails after a timeout.
func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case e, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event in 10s")
	}
	return watch.Event{}
}

func describe(e watch.Event) string {
	if p, ok := e.Object.(*v1alpha1.EffectivePolicy); ok {
		return fmt.Sprintf("%s %s/%s", e.Type, p.Namespace, p.Name)
	}
	return fmt.Sprintf("%s %T", e.Type, e.Object)
}

func TestWatchResume(t *testing.T) {
	ctx := ctxFor(t)
	cs := newClient(t)
	epStore.Apply([]change{ep("resume", "a", nil, target("HTTPRoute", "a"))})
	list, err := cs.EffectivepolicyV1alpha1().EffectivePolicies("resume").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Changes after the list, some in another namespace.
	epStore.Apply([]change{ep("resume", "a", nil, target("Gateway", "a")), ep("resume", "b", nil)})
	epStore.Apply([]change{ep("resume-other", "x", nil)})
	rvDel, _ := epStore.Apply([]change{del("resume", "a")})

	w, err := cs.EffectivepolicyV1alpha1().EffectivePolicies("resume").Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	want := []string{"MODIFIED resume/a", "ADDED resume/b", "DELETED resume/a"}
	for i, wantEv := range want {
		e := nextEvent(t, w)
		if describe(e) != wantEv {
			t.Fatalf("event %d: got %s, want %s", i, describe(e), wantEv)
		}
		if i == 2 && e.Object.(*v1alpha1.EffectivePolicy).ResourceVersion != strconv.FormatUint(rvDel, 10) {
			t.Errorf("deletion carries rv %s, want %d", e.Object.(*v1alpha1.EffectivePolicy).ResourceVersion, rvDel)
		}
	}
	// A live change arrives too.
	epStore.Apply([]change{ep("resume", "c", nil)})
	if got := describe(nextEvent(t, w)); got != "ADDED resume/c" {
		t.Fatalf("got %s", got)
	}
}

func TestWatchGone(t *testing.T) {
	ctx := ctxFor(t)
	cs := newClient(t)
	epStore.Apply([]change{ep("gone", "a", nil)})
	old := epStore.ResourceVersion()
	for i := 0; i <= historySize; i++ {
		epStore.Apply([]change{ep("gone", "a", map[string]string{"i": strconv.Itoa(i)})})
	}
	for _, tc := range []struct {
		name string
		rv   uint64
	}{
		{"too old", old},
		{"from the future", epStore.ResourceVersion() + 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := cs.EffectivepolicyV1alpha1().EffectivePolicies("gone").Watch(ctx, metav1.ListOptions{ResourceVersion: strconv.FormatUint(tc.rv, 10)})
			if err == nil {
				// Errors may also arrive as an event, depending on the client.
				e := nextEvent(t, w)
				w.Stop()
				err = apierrors.FromObject(e.Object)
			}
			if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
				t.Fatalf("want 410 Gone, got %v", err)
			}
		})
	}
}

func TestWatchInitialEvents(t *testing.T) {
	ctx := ctxFor(t)
	cs := newClient(t)
	epStore.Apply([]change{
		ep("initial", "a", map[string]string{"app": "x"}),
		ep("initial", "b", map[string]string{"app": "y"}),
	})
	yes := true
	for _, tc := range []struct {
		name string
		opts metav1.ListOptions
		want []string
	}{
		{"watch-list", metav1.ListOptions{SendInitialEvents: &yes, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true},
			[]string{"ADDED initial/a", "ADDED initial/b", "BOOKMARK"}},
		{"watch-list with selector", metav1.ListOptions{SendInitialEvents: &yes, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true, LabelSelector: "app=y"},
			[]string{"ADDED initial/b", "BOOKMARK"}},
		{"legacy rv=0", metav1.ListOptions{ResourceVersion: "0"},
			[]string{"ADDED initial/a", "ADDED initial/b"}},
		{"legacy no rv, field selector", metav1.ListOptions{FieldSelector: "metadata.name=a"},
			[]string{"ADDED initial/a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := cs.EffectivepolicyV1alpha1().EffectivePolicies("initial").Watch(ctx, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			for _, want := range tc.want {
				e := nextEvent(t, w)
				if want == "BOOKMARK" {
					p, ok := e.Object.(*v1alpha1.EffectivePolicy)
					if e.Type != watch.Bookmark || !ok || p.Annotations[metav1.InitialEventsAnnotationKey] != "true" || p.ResourceVersion == "" {
						t.Fatalf("want the initial-events-end bookmark, got %s %+v", e.Type, e.Object)
					}
					continue
				}
				if describe(e) != want {
					t.Fatalf("got %s, want %s", describe(e), want)
				}
			}
		})
	}
}

func TestWatchLabelTransitions(t *testing.T) {
	ctx := ctxFor(t)
	cs := newClient(t)
	epStore.Apply([]change{ep("labels", "a", map[string]string{"app": "x"})})
	w, err := cs.EffectivepolicyV1alpha1().EffectivePolicies("labels").Watch(ctx, metav1.ListOptions{LabelSelector: "app=x"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	steps := []struct {
		change change
		want   string
	}{
		{ep("labels", "b", map[string]string{"app": "y"}), ""}, // invisible
		{ep("labels", "a", map[string]string{"app": "y"}), "DELETED labels/a"},
		{ep("labels", "b", map[string]string{"app": "x"}), "ADDED labels/b"},
		{ep("labels", "b", map[string]string{"app": "x", "v": "2"}), "MODIFIED labels/b"},
		{del("labels", "a"), ""}, // was already gone for this watcher
		{del("labels", "b"), "DELETED labels/b"},
	}
	if got := describe(nextEvent(t, w)); got != "ADDED labels/a" {
		t.Fatalf("initial event: %s", got)
	}
	for _, s := range steps {
		epStore.Apply([]change{s.change})
		if s.want == "" {
			continue
		}
		if got := describe(nextEvent(t, w)); got != s.want {
			t.Fatalf("got %s, want %s", got, s.want)
		}
	}
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

func TestTable(t *testing.T) {
	ctx := ctxFor(t)
	rc := newClient(t).EffectivepolicyV1alpha1().RESTClient()
	epStore.Apply([]change{ep("table", "baker", nil,
		target("Gateway", "baker", policyKind("RetryPolicy", "table/r1", "table/r2"), policyKind("ColorPolicy", "table/c1")),
		target("HTTPRoute", "baker", policyKind("RetryPolicy", "table/r1")),
	)})
	for _, tc := range []struct {
		name       string
		get        func() ([]byte, error)
		withObject bool
	}{
		{"list", func() ([]byte, error) {
			return rc.Get().Namespace("table").Resource("effectivepolicies").
				SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
		}, false},
		{"get", func() ([]byte, error) {
			return rc.Get().Namespace("table").Resource("effectivepolicies").Name("baker").
				SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
		}, false},
		// kubectl get --sort-by asks for the whole objects in the rows.
		{"list with objects", func() ([]byte, error) {
			return rc.Get().Namespace("table").Resource("effectivepolicies").Param("includeObject", "Object").
				SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
		}, true},
		{"get with object", func() ([]byte, error) {
			return rc.Get().Namespace("table").Resource("effectivepolicies").Name("baker").Param("includeObject", "Object").
				SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := tc.get()
			if err != nil {
				t.Fatal(err)
			}
			var table metav1.Table
			if err := json.Unmarshal(raw, &table); err != nil {
				t.Fatal(err)
			}
			if table.Kind != "Table" || table.ResourceVersion == "" {
				t.Errorf("kind %q rv %q", table.Kind, table.ResourceVersion)
			}
			var cols []string
			for _, c := range table.ColumnDefinitions {
				cols = append(cols, c.Name)
			}
			if !slices.Equal(cols, []string{"Name", "Targets", "Policies", "Kinds", "Age"}) {
				t.Errorf("columns %v", cols)
			}
			if len(table.Rows) != 1 {
				t.Fatalf("rows %v", table.Rows)
			}
			cells := fmt.Sprint(table.Rows[0].Cells[:4])
			if cells != "[baker Gateway,HTTPRoute 3 ColorPolicy,RetryPolicy]" {
				t.Errorf("cells %s", cells)
			}
			if tc.withObject {
				var p v1alpha1.EffectivePolicy
				if err := json.Unmarshal(table.Rows[0].Object.Raw, &p); err != nil || p.Kind != "EffectivePolicy" || p.Name != "baker" || len(p.Targets) != 2 {
					t.Errorf("row object %s (%v)", table.Rows[0].Object.Raw, err)
				}
			}
		})
	}
}

func TestDiscovery(t *testing.T) {
	cs := newClient(t)
	list, err := cs.Discovery().ServerResourcesForGroupVersion("effectivepolicy.dev/v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]metav1.APIResource{
		"effectivepolicies":        {Namespaced: true, Kind: "EffectivePolicy", SingularName: "effectivepolicy", ShortNames: []string{"effpol"}},
		"clustereffectivepolicies": {Namespaced: false, Kind: "ClusterEffectivePolicy", SingularName: "clustereffectivepolicy", ShortNames: []string{"ceffpol"}},
		"policyreaches":            {Namespaced: true, Kind: "PolicyReach", SingularName: "policyreach", ShortNames: []string{"polreach"}},
		"clusterpolicyreaches":     {Namespaced: false, Kind: "ClusterPolicyReach", SingularName: "clusterpolicyreach", ShortNames: []string{"cpolreach"}},
		"requesttraces":            {Namespaced: false, Kind: "RequestTrace", SingularName: "requesttrace", Verbs: []string{"create"}, Categories: []string{}},
		"effectivepolicyreviews":   {Namespaced: false, Kind: "EffectivePolicyReview", SingularName: "effectivepolicyreview", Verbs: []string{"create"}, Categories: []string{}},
	}
	for _, r := range list.APIResources {
		w, ok := want[r.Name]
		if !ok {
			t.Errorf("unexpected resource %s", r.Name)
			continue
		}
		delete(want, r.Name)
		verbs := append([]string(nil), r.Verbs...)
		sort.Strings(verbs)
		wantVerbs := []string{"get", "list", "watch"}
		if w.Verbs != nil {
			wantVerbs = w.Verbs
		}
		if r.Namespaced != w.Namespaced || r.Kind != w.Kind || r.SingularName != w.SingularName ||
			!slices.Equal(r.ShortNames, w.ShortNames) || !slices.Equal(verbs, wantVerbs) ||
			!slices.Equal(r.Categories, wantCategories(w)) {
			t.Errorf("%s: %+v", r.Name, r)
		}
	}
	if len(want) > 0 {
		t.Errorf("missing %v", want)
	}
}

// wantCategories: the read resources are in the gateway-api category
// (kubectl get gateway-api); a review kind, which cannot be listed, is in
// none.
func wantCategories(w metav1.APIResource) []string {
	if w.Categories != nil {
		return nil
	}
	return []string{"gateway-api"}
}

func TestOpenAPI(t *testing.T) {
	ctx := ctxFor(t)
	rc := newClient(t).Discovery().RESTClient()

	raw, err := rc.Get().AbsPath("/openapi/v2").SetHeader("Accept", "application/json").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var v2 struct {
		Definitions map[string]struct {
			Extensions []map[string]string `json:"x-kubernetes-group-version-kind"`
		} `json:"definitions"`
		Paths map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(raw, &v2); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"EffectivePolicy", "ClusterEffectivePolicy", "EffectivePolicyList"} {
		d, ok := v2.Definitions["dev.effectivepolicy.v1alpha1."+kind]
		if !ok || len(d.Extensions) != 1 || d.Extensions[0]["kind"] != kind || d.Extensions[0]["group"] != "effectivepolicy.dev" {
			t.Errorf("v2: %s missing or without its group-version-kind: %+v", kind, d)
		}
	}
	if _, ok := v2.Paths["/apis/effectivepolicy.dev/v1alpha1/namespaces/{namespace}/effectivepolicies/{name}"]; !ok {
		t.Error("v2: effectivepolicies path missing")
	}

	raw, err = rc.Get().AbsPath("/openapi/v3").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var index struct {
		Paths map[string]struct {
			URL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(raw, &index); err != nil {
		t.Fatal(err)
	}
	gv, ok := index.Paths["apis/effectivepolicy.dev/v1alpha1"]
	if !ok {
		t.Fatalf("v3: group version missing from %s", raw)
	}
	u, q, _ := strings.Cut(gv.URL, "?")
	req := rc.Get().AbsPath(u)
	if h, ok := strings.CutPrefix(q, "hash="); ok {
		req = req.Param("hash", h)
	}
	raw, err = req.DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var v3 struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &v3); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"EffectivePolicy", "ClusterEffectivePolicy", "Target", "PolicySource", "EffectiveSpec"} {
		if _, ok := v3.Components.Schemas["dev.effectivepolicy.v1alpha1."+kind]; !ok {
			t.Errorf("v3: %s missing", kind)
		}
	}
	if _, ok := v3.Components.Schemas["dev.effectivepolicy.v1alpha1.EffectivePolicy"].Properties["targets"]; !ok {
		t.Error("v3: EffectivePolicy has no targets property")
	}
}

func TestInformer(t *testing.T) {
	for _, watchList := range []bool{false, true} {
		t.Run(fmt.Sprintf("WatchListClient=%v", watchList), func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, watchList)
			ns := fmt.Sprintf("informer-%v", watchList)
			epStore.Apply([]change{ep(ns, "a", nil), ep(ns, "b", nil)})

			ctx, cancel := context.WithCancel(ctxFor(t))
			takeRequests()
			factory := informers.NewSharedInformerFactoryWithOptions(newClient(t), 0, informers.WithNamespace(ns))
			inf := factory.Effectivepolicy().V1alpha1().EffectivePolicies()
			events := make(chan string, 100)
			_, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
				AddFunc:    func(o any) { events <- "add " + o.(*v1alpha1.EffectivePolicy).Name },
				UpdateFunc: func(_, o any) { events <- "update " + o.(*v1alpha1.EffectivePolicy).Name },
				DeleteFunc: func(o any) {
					if p, ok := o.(*v1alpha1.EffectivePolicy); ok {
						events <- "delete " + p.Name
					}
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			factory.Start(ctx.Done())
			defer func() { cancel(); factory.Shutdown() }()
			for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
				if !ok {
					t.Fatalf("%v did not sync", typ)
				}
			}
			got, err := inf.Lister().EffectivePolicies(ns).List(everything())
			if err != nil || len(got) != 2 {
				t.Fatalf("lister: %v %v", got, err)
			}

			// The informer used the protocol the feature gate asks for.
			var sawWatchList, sawList bool
			for _, r := range takeRequests() {
				if !strings.Contains(r, "/namespaces/"+ns+"/effectivepolicies") {
					continue
				}
				if strings.Contains(r, "sendInitialEvents=true") {
					sawWatchList = true
				} else if !strings.Contains(r, "watch=true") {
					sawList = true
				}
			}
			if sawWatchList != watchList || sawList == watchList {
				t.Errorf("watch-list request %v, list request %v; want watch-list %v", sawWatchList, sawList, watchList)
			}

			epStore.Apply([]change{ep(ns, "a", map[string]string{"x": "y"}), del(ns, "b"), ep(ns, "c", nil)})
			want := map[string]bool{"add a": true, "add b": true, "update a": true, "delete b": true, "add c": true}
			deadline := time.After(10 * time.Second)
			for len(want) > 0 {
				select {
				case e := <-events:
					delete(want, e)
				case <-deadline:
					t.Fatalf("missing informer events %v", want)
				}
			}
		})
	}
}

func everything() labels.Selector { return labels.Everything() }

package ui

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/manifests"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/offline"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// demoSource answers from the demo's manifests (hack/demo) with the
// plugin's offline engine; forbidCluster makes the cluster-scoped lists
// answer 403, as for a user who may read one namespace only.
type demoSource struct {
	c             *offline.Cluster
	forbidCluster bool
}

func newDemoSource(t *testing.T) *demoSource {
	t.Helper()
	return newSourceOf(t, "../../../hack/demo")
}

// newSourceOf answers from the manifests of dir with the plugin's offline engine.
func newSourceOf(t *testing.T, dir string) *demoSource {
	t.Helper()
	objs, err := manifests.Read(manifests.Options{Filenames: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := offline.New(manifests.Complete(objs, manifests.Scope{Namespace: "default"}), compute.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &demoSource{c: c}
}

func (s *demoSource) EffectivePolicies(_ context.Context, ns string, cluster bool) (runtime.Object, error) {
	if cluster && s.forbidCluster {
		return nil, apierrors.NewForbidden(v1alpha1.Resource("clustereffectivepolicies"), "", nil)
	}
	if cluster {
		l := &v1alpha1.ClusterEffectivePolicyList{}
		for _, o := range s.c.EffectivePolicies(ns, true) {
			l.Items = append(l.Items, *o.(*v1alpha1.ClusterEffectivePolicy))
		}
		return l, nil
	}
	l := &v1alpha1.EffectivePolicyList{}
	for _, o := range s.c.EffectivePolicies(ns, false) {
		l.Items = append(l.Items, *o.(*v1alpha1.EffectivePolicy))
	}
	return l, nil
}

func (s *demoSource) EffectivePolicy(_ context.Context, ns, name string) (runtime.Object, error) {
	if o, ok := s.c.EffectivePolicy(ns, name); ok {
		return o, nil
	}
	return nil, apierrors.NewNotFound(v1alpha1.Resource("effectivepolicies"), name)
}

func (s *demoSource) PolicyReaches(_ context.Context, ns string, cluster bool) (runtime.Object, error) {
	if cluster {
		return &v1alpha1.ClusterPolicyReachList{}, nil
	}
	l := &v1alpha1.PolicyReachList{}
	for _, o := range s.c.PolicyReaches(ns, false) {
		l.Items = append(l.Items, *o.(*v1alpha1.PolicyReach))
	}
	return l, nil
}

func (s *demoSource) PolicyReach(_ context.Context, ns, name string) (runtime.Object, error) {
	if o, ok := s.c.PolicyReach(ns, name); ok {
		return o, nil
	}
	return nil, apierrors.NewNotFound(v1alpha1.Resource("policyreaches"), name)
}

func (s *demoSource) Trace(_ context.Context, rt *v1alpha1.RequestTrace) (*v1alpha1.RequestTrace, error) {
	return s.c.Trace(rt)
}

// get asks the guarded server for path as the page does.
func get(t *testing.T, s *Server, path string, params url.Values) (int, map[string]any) {
	t.Helper()
	_, port, _ := strings.Cut(s.listener.Addr().String(), ":")
	target := "http://127.0.0.1:" + port + path
	if len(params) > 0 {
		target += "?" + params.Encode()
	}
	r := httptest.NewRequest(http.MethodGet, target, nil)
	r.Header.Set(TokenHeader, s.token)
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, r)
	var body map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatalf("%s: %v: %s", path, err, w.Body.String())
	}
	return w.Code, body
}

func newTestServer(t *testing.T, src Source, namespace string) *Server {
	t.Helper()
	s, err := New(Options{Source: src, Namespace: namespace})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.listener.Close() })
	t.Cleanup(s.stopLife)
	if s.store != nil {
		// A watch that ends is listed again at once, not after a back-off.
		s.store.relist = time.Millisecond
		s.reachStore.relist = time.Millisecond
	}
	return s
}

// TestAPI: each endpoint on the demo's manifests, and bad input.
func TestAPI(t *testing.T) {
	s := newTestServer(t, newDemoSource(t), "")
	route := url.Values{"group": {"gateway.networking.k8s.io"}, "kind": {"HTTPRoute"}, "namespace": {"baker"}, "name": {"baker"}}
	cases := []struct {
		name     string
		path     string
		params   url.Values
		status   int
		contains []string
	}{
		{name: "graph", path: "/api/graph", status: 200, contains: []string{
			`"id":"gateway.networking.k8s.io/Gateway/infra/cupcakes"`, `"id":"gateway.networking.k8s.io/HTTPRoute/baker/baker"`,
			`"outcome":"partial"`, "PartiallyEnforced", `"from":"gateway.networking.k8s.io/HTTPRoute/baker/baker","to":"/Service/baker/baker"`}},
		{name: "target", path: "/api/target", params: route, status: 200, contains: []string{"HTTPRoute baker/baker", "RetryPolicy", "baker/baker-timeouts"}},
		{name: "target of no policy", path: "/api/target", params: url.Values{"kind": {"HTTPRoute"}, "namespace": {"baker"}, "name": {"nothing"}}, status: 404, contains: []string{"not found"}},
		{name: "target without a name", path: "/api/target", params: url.Values{"kind": {"HTTPRoute"}}, status: 400, contains: []string{"kind and name are required"}},
		{name: "reaches", path: "/api/reaches", status: 200, contains: []string{"TimeoutPolicy baker/baker-timeouts", "RetryPolicy infra/retry-budget"}},
		{name: "reach", path: "/api/reach", params: url.Values{"group": {"demo.effectivepolicy.dev"}, "kind": {"TimeoutPolicy"}, "namespace": {"infra"}, "name": {"gateway-timeouts"}}, status: 200,
			contains: []string{"infra/gateway-timeouts", `"id":"gateway.networking.k8s.io/HTTPRoute/baker/baker","note":"PartiallyEnforced (Defaults), Enforced (Overrides)"`}},
		{name: "reach of another kind", path: "/api/reach", params: url.Values{"kind": {"RetryPolicy"}, "namespace": {"infra"}, "name": {"gateway-timeouts"}}, status: 404},
		{name: "trace", path: "/api/trace", params: url.Values{"host": {"baker.cupcakes.example"}, "path": {"/orders"}}, status: 200,
			contains: []string{`"id":"gateway.networking.k8s.io/Gateway/infra/cupcakes"`, `"id":"gateway.networking.k8s.io/HTTPRoute/baker/baker"`, `"note":"backend"`}},
		{name: "trace with a bad port", path: "/api/trace", params: url.Values{"host": {"a"}, "port": {"http"}}, status: 400, contains: []string{"port must be a number"}},
		{name: "trace with a bad header", path: "/api/trace", params: url.Values{"host": {"a"}, "headers": {"no-value"}}, status: 400, contains: []string{"want NAME=VALUE"}},
		{name: "unknown endpoint", path: "/api/secrets", status: 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body := get(t, s, tc.path, tc.params)
			raw, _ := json.Marshal(body)
			if code != tc.status {
				t.Fatalf("status %d, want %d: %s", code, tc.status, raw)
			}
			for _, want := range tc.contains {
				if !strings.Contains(string(raw), want) {
					t.Errorf("answer lacks %s: %s", want, raw)
				}
			}
		})
	}
}

// TestGraphOneNamespace: a user who may read one namespace gets its
// objects; the cluster-scoped lists answer 403 and are left out.
func TestGraphOneNamespace(t *testing.T) {
	src := newDemoSource(t)
	src.forbidCluster = true
	s := newTestServer(t, src, "infra")
	code, body := get(t, s, "/api/graph", nil)
	raw, _ := json.Marshal(body)
	if code != 200 {
		t.Fatalf("status %d: %s", code, raw)
	}
	if !strings.Contains(string(raw), "Gateway/infra/cupcakes") || strings.Contains(string(raw), `"target":true,"id":"/Namespace`) {
		t.Errorf("graph of infra: %s", raw)
	}
	for _, n := range body["nodes"].([]any) {
		node := n.(map[string]any)
		if node["target"] == true && node["namespace"] != "infra" {
			t.Errorf("a target outside infra: %v", node)
		}
	}
}

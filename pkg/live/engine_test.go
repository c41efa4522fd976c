package live

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/yamldocs"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
)

// These tests run the live layer with the real engine on the reference
// scenarios and check that it serves exactly what compute.ComputeAll returns
// for the untrimmed objects: the transforms keep everything the engine reads.

const scenarioDir = "../../test/scenarios"

func parseDocs(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := yamldocs.Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

// runRealEngine runs the live layer with the real engine on a fake cluster
// holding objs (each through prepare), until the test ends, and returns it
// ready.
func runRealEngine(t *testing.T, objs []*unstructured.Unstructured, prepare func(*unstructured.Unstructured) *unstructured.Unstructured) (*Live, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), scenarioListKinds())
	for _, o := range objs {
		// Not through the constructor: the fake guesses "gatewaies".
		gvr := o.GroupVersionKind().GroupVersion().WithResource(plurals[o.GetKind()])
		if err := client.Tracker().Create(gvr, prepare(o), o.GetNamespace()); err != nil {
			t.Fatal(err)
		}
	}
	o := NewOptions()
	o.CacheDir = t.TempDir()
	o.RecomputeDebounce = time.Millisecond
	l, err := o.NewForClient(client)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = l.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	h := &harness{t: t}
	h.eventually("ready", l.Ready)
	return l, client
}

// noisy adds what a real API server returns and the engine does not read.
func noisy(u *unstructured.Unstructured) *unstructured.Unstructured {
	u = u.DeepCopy()
	u.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": strings.Repeat("x", 500)})
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}})
	u.SetGeneration(3)
	u.Object["status"] = map[string]interface{}{"conditions": []interface{}{map[string]interface{}{"type": "Accepted", "status": "True"}}}
	return u
}

var gatewayCRDs = []*unstructured.Unstructured{
	crd("gateway.networking.k8s.io", "GatewayClass", "gatewayclasses", false),
	crd("gateway.networking.k8s.io", "Gateway", "gateways", false),
	crd("gateway.networking.k8s.io", "HTTPRoute", "httproutes", false),
}

func scenarioListKinds() map[schema.GroupVersionResource]string {
	m := listKinds()
	m[schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gatewayclasses"}] = "GatewayClassList"
	m[schema.GroupVersionResource{Group: "colors.example.com", Version: "v1", Resource: "colorpolicies"}] = "ColorPolicyList"
	m[schema.GroupVersionResource{Group: "direct.colors.example.com", Version: "v1", Resource: "colorpolicies"}] = "ColorPolicyList"
	return m
}

var plurals = map[string]string{
	"CustomResourceDefinition": "customresourcedefinitions", "Namespace": "namespaces", "Service": "services",
	"GatewayClass": "gatewayclasses", "Gateway": "gateways", "HTTPRoute": "httproutes", "ColorPolicy": "colorpolicies",
}

func targetsJSON(t *testing.T, obj runtime.Object) string {
	t.Helper()
	targets, err := encoded.TargetsOf(obj)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(targets)
	if err != nil {
		t.Fatal(err)
	}
	// Through a generic value, so that RawExtension formatting does not count.
	var v interface{}
	_ = json.Unmarshal(data, &v)
	data, _ = json.Marshal(v)
	return string(data)
}

// served returns what the live layer serves, by key.
func served(t *testing.T, l *Live) map[compute.Key]string {
	t.Helper()
	out := map[compute.Key]string{}
	for _, b := range []*Backend{l.EffectivePolicies(), l.ClusterEffectivePolicies()} {
		objs, _, err := b.List(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			m, err := meta.Accessor(o)
			if err != nil {
				t.Fatal(err)
			}
			out[compute.Key{Namespace: m.GetNamespace(), Name: m.GetName()}] = targetsJSON(t, o)
		}
	}
	return out
}

func expected(t *testing.T, objs []*unstructured.Unstructured) map[compute.Key]string {
	t.Helper()
	all, err := compute.ComputeAll(objs, compute.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[compute.Key]string{}
	for k, o := range all {
		out[k] = targetsJSON(t, o)
	}
	return out
}

func diff(got, want map[compute.Key]string) []string {
	var d []string
	for k, w := range want {
		if g, ok := got[k]; !ok {
			d = append(d, "missing "+k.String())
		} else if g != w {
			d = append(d, k.String()+":\n got  "+g+"\n want "+w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			d = append(d, "unexpected "+k.String())
		}
	}
	return d
}

func TestRealEngineServesScenarios(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(scenarioDir, "*", "policies.yaml"))
	if len(dirs) == 0 {
		t.Fatalf("no scenarios under %s", scenarioDir)
	}
	base := parseDocs(t, filepath.Join(scenarioDir, "crds", "colorpolicies.yaml"))
	base = append(base, parseDocs(t, filepath.Join(scenarioDir, "topology.yaml"))...)
	for _, p := range dirs {
		dir := filepath.Dir(p)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			policies := parseDocs(t, p)
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			for i, o := range policies {
				o.SetCreationTimestamp(metav1.NewTime(start.Add(time.Duration(i) * time.Second)))
			}
			all := append(append(append([]*unstructured.Unstructured{}, gatewayCRDs...), base...), policies...)
			want := expected(t, all)
			if len(want) == 0 {
				t.Fatal("the scenario computes nothing")
			}

			l, client := runRealEngine(t, all, noisy)
			ctx := context.Background()
			if d := diff(served(t, l), want); len(d) > 0 {
				t.Fatalf("served != ComputeAll:\n%s", strings.Join(d, "\n"))
			}
			if d := reachDiff(t, l, policies); len(d) > 0 {
				t.Fatalf("reaches != outputs:\n%s", strings.Join(d, "\n"))
			}

			// Delete the newest policy: the live layer converges to
			// ComputeAll of the rest.
			last := policies[len(policies)-1]
			gvr := schema.GroupVersionResource{Group: last.GroupVersionKind().Group, Version: last.GroupVersionKind().Version, Resource: "colorpolicies"}
			if err := client.Resource(gvr).Namespace(last.GetNamespace()).Delete(ctx, last.GetName(), metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			want = expected(t, all[:len(all)-1])
			var d []string
			deadline := time.Now().Add(10 * time.Second)
			for {
				if d = diff(served(t, l), want); len(d) == 0 || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if len(d) > 0 {
				t.Errorf("after deleting %s: served != ComputeAll:\n%s", last.GetName(), strings.Join(d, "\n"))
			}
			// The reaches follow in the same flush as the outputs.
			if d := reachDiff(t, l, policies[:len(policies)-1]); len(d) > 0 {
				t.Errorf("after deleting %s: reaches != outputs:\n%s", last.GetName(), strings.Join(d, "\n"))
			}
		})
	}
}

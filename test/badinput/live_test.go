package badinput

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/live"
)

// ---- live layer ----

var plurals = map[string]string{
	"CustomResourceDefinition": "customresourcedefinitions", "Namespace": "namespaces", "Service": "services",
	"GatewayClass": "gatewayclasses", "Gateway": "gateways", "HTTPRoute": "httproutes", "ListenerSet": "listenersets",
	"ReferenceGrant": "referencegrants", "ColorPolicy": "colorpolicies", "GRPCRoute": "grpcroutes",
}

// resourceOf finds the resource of an object: the kind table, else the CRDs
// of the case.
func resourceOf(o *unstructured.Unstructured, objs []*unstructured.Unstructured) (schema.GroupVersionResource, bool) {
	gvk := o.GroupVersionKind()
	if gvk.Version == "" {
		return schema.GroupVersionResource{}, false // an API server would not store it
	}
	if p, ok := plurals[gvk.Kind]; ok {
		return gvk.GroupVersion().WithResource(p), true
	}
	for _, c := range objs {
		if !isCRD(c) {
			continue
		}
		group, _, _ := unstructured.NestedString(c.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(c.Object, "spec", "names", "kind")
		plural, _, _ := unstructured.NestedString(c.Object, "spec", "names", "plural")
		if group == gvk.Group && kind == gvk.Kind && plural != "" {
			return gvk.GroupVersion().WithResource(plural), true
		}
	}
	return schema.GroupVersionResource{}, false
}

// TestCorpusLive runs each case through pkg/live with a fake dynamic
// client: the server path (informers, transforms, engine, stores, cache)
// serves exactly what a fresh engine computes, and starts at all.
func TestCorpusLive(t *testing.T) {
	baseObjs := baseline(t)
	for _, c := range corpus(t) {
		t.Run(strings.TrimSuffix(c.file, ".yaml"), func(t *testing.T) {
			checkCaseLive(t, append(append([]*unstructured.Unstructured{}, baseObjs...), c.objs...))
		})
	}
}

// checkCaseLive serves all from a fake cluster through pkg/live, then from the cache of a
// restarted live layer, and compares both with what a fresh engine computes.
func checkCaseLive(t *testing.T, all []*unstructured.Unstructured) {
	e, err := compute.NewEngine(compute.Options{})
	if err != nil {
		t.Fatal(err)
	}
	feed(e, all)
	want := computeAllEngine(t, e)

	client := fakeClusterOf(t, e, all)
	o := live.NewOptions()
	o.CacheDir = t.TempDir()
	o.RecomputeDebounce = time.Millisecond
	l, err := o.NewForClient(client)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = l.Run(ctx) }()
	defer cancel()
	if d := waitServed(t, l, want, time.Now().Add(30*time.Second)); len(d) > 0 {
		t.Errorf("served != engine: %v", d)
	}

	// The bbolt cache holds what was served: a restarted server
	// restores it before reading the cluster.
	cancel()
	<-done
	l2, err := o.NewForClient(client)
	if err != nil {
		t.Fatal(err)
	}
	if err := l2.CacheError(); err != nil {
		t.Errorf("cache: %v", err)
	}
	if d := equalOutputs(t, served(t, l2), want); len(d) > 0 {
		t.Errorf("restored from the cache != engine: %v", d)
	}
}

// fakeClusterOf is a fake dynamic client holding the objects of all an API server would store,
// with a list kind for each resource the live layer lists.
func fakeClusterOf(t *testing.T, e *compute.Engine, all []*unstructured.Unstructured) *dynamicfake.FakeDynamicClient {
	t.Helper()
	listKinds, stored := listKindsOf(e, all)
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds)
	for _, o := range stored {
		gvr, _ := resourceOf(o, all)
		if err := client.Tracker().Create(gvr, o.DeepCopy(), o.GetNamespace()); err != nil {
			t.Logf("not stored (an API server would refuse it too): %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	return client
}

// listKindsOf is the list kind of each resource of all, of e's policy resources and of the
// topology kinds, and the objects of all an API server would store.
func listKindsOf(e *compute.Engine, all []*unstructured.Unstructured) (map[schema.GroupVersionResource]string, []*unstructured.Unstructured) {
	listKinds := map[schema.GroupVersionResource]string{}
	var stored []*unstructured.Unstructured
	for _, o := range all {
		gvr, ok := resourceOf(o, all)
		if !ok || o.GetName() == "" {
			continue // an API server would not store it
		}
		listKinds[gvr] = o.GetKind() + "List"
		stored = append(stored, o)
	}
	for _, gvr := range e.PolicyResources() {
		if _, ok := listKinds[gvr]; !ok {
			listKinds[gvr] = "UnstructuredList"
		}
	}
	for _, k := range []string{"GatewayClass", "Gateway", "HTTPRoute", "ListenerSet", "GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute"} {
		listKinds[schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: strings.ToLower(k) + "s"}] = k + "List"
	}
	listKinds[schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1beta1", Resource: "referencegrants"}] = "ReferenceGrantList"
	for _, r := range []string{"customresourcedefinitions", "namespaces", "services"} {
		g := ""
		v := "v1"
		if r == "customresourcedefinitions" {
			g = "apiextensions.k8s.io"
		}
		kind := map[string]string{"customresourcedefinitions": "CustomResourceDefinitionList", "namespaces": "NamespaceList", "services": "ServiceList"}[r]
		listKinds[schema.GroupVersionResource{Group: g, Version: v, Resource: r}] = kind
	}
	return listKinds, stored
}

// waitServed waits until l is ready and serves want, or deadline passes, and returns how what
// it serves last differs from want.
func waitServed(t *testing.T, l *live.Live, want map[compute.Key][]v1alpha1.Target, deadline time.Time) []string {
	t.Helper()
	for !l.Ready() {
		if time.Now().After(deadline) {
			t.Fatal("the live layer never became ready")
		}
		time.Sleep(5 * time.Millisecond)
	}
	var d []string
	for {
		got := served(t, l)
		if d = equalOutputs(t, got, want); len(d) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return d
}

func served(t *testing.T, l *live.Live) map[compute.Key][]v1alpha1.Target {
	t.Helper()
	out := map[compute.Key][]v1alpha1.Target{}
	for _, b := range []*live.Backend{l.EffectivePolicies(), l.ClusterEffectivePolicies()} {
		objs, _, err := b.List(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			m, err := meta.Accessor(o)
			if err != nil {
				t.Fatal(err)
			}
			targets, err := encoded.TargetsOf(o) // the live layer serves encoded.Objects
			if err != nil {
				t.Fatal(err)
			}
			out[compute.Key{Namespace: m.GetNamespace(), Name: m.GetName()}] = targets
		}
	}
	return out
}

package live

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/inputs"
)

var (
	retryGVR   = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "retrypolicies"}
	retryV2GVR = schema.GroupVersionResource{Group: "example.com", Version: "v2", Resource: "retrypolicies"}
	routeGVR   = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}
)

func listKinds() map[schema.GroupVersionResource]string {
	return map[schema.GroupVersionResource]string{
		inputs.CRDResource:       "CustomResourceDefinitionList",
		inputs.NamespaceResource: "NamespaceList",
		inputs.ServiceResource:   "ServiceList",
		retryGVR:                 "RetryPolicyList",
		retryV2GVR:               "RetryPolicyList",
		routeGVR:                 "HTTPRouteList",
		{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}: "GatewayList",
	}
}

func crd(group, kind, plural string, policy bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]interface{}{"name": plural + "." + group},
		"spec": map[string]interface{}{
			"group": group,
			"scope": "Namespaced",
			"names": map[string]interface{}{"kind": kind, "plural": plural, "listKind": kind + "List"},
			"versions": []interface{}{
				map[string]interface{}{"name": "v1alpha1", "served": false, "storage": false},
				map[string]interface{}{"name": "v1", "served": true, "storage": true},
			},
		},
	}}
	if policy {
		u.SetLabels(map[string]string{"gateway.networking.k8s.io/policy": "inherited"})
	}
	return u
}

func policy(ns, name, target, value string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "example.com/v1",
		"kind":       "RetryPolicy",
		"metadata":   map[string]interface{}{"name": name, "namespace": ns},
		"spec": map[string]interface{}{
			"targetRef": map[string]interface{}{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": target},
			"value":     value,
		},
	}}
}

func route(ns, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "gateway.networking.k8s.io/v1",
		"kind":       "HTTPRoute",
		"metadata":   map[string]interface{}{"name": name, "namespace": ns},
		"spec":       map[string]interface{}{},
	}}
}

type harness struct {
	t      *testing.T
	client *dynamicfake.FakeDynamicClient
	engine *fakeEngine
	live   *Live
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	watches map[string]int // resource -> watches started
}

func newHarness(t *testing.T, dir string, debounce time.Duration, objs ...runtime.Object) *harness {
	t.Helper()
	h := &harness{t: t, engine: newFakeEngine(), watches: map[string]int{}}
	h.client = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds(), objs...)
	h.client.PrependWatchReactor("*", func(a clienttesting.Action) (bool, watch.Interface, error) {
		h.mu.Lock()
		h.watches[a.GetResource().Resource]++
		h.mu.Unlock()
		return false, nil, nil
	})
	o := NewOptions()
	o.CacheDir = dir
	o.RecomputeDebounce = debounce
	l, err := NewWithEngine(o, h.engine, h.client)
	if err != nil {
		t.Fatal(err)
	}
	h.live = l
	return h
}

func (h *harness) start() {
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan struct{})
	go func() { defer close(h.done); _ = h.live.Run(ctx) }()
	h.t.Cleanup(h.stop)
	h.eventually("ready", h.live.Ready)
}

func (h *harness) stop() {
	if h.cancel == nil {
		return
	}
	h.cancel()
	<-h.done
	h.cancel = nil
}

func (h *harness) eventually(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// watching waits until an informer watches resource (so that changes made
// afterwards are not lost between its list and its watch).
func (h *harness) watching(resource string, n int) {
	h.t.Helper()
	h.eventually("watch on "+resource, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.watches[resource] >= n
	})
}

func (h *harness) create(gvr schema.GroupVersionResource, u *unstructured.Unstructured) {
	h.t.Helper()
	if _, err := h.client.Resource(gvr).Namespace(u.GetNamespace()).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) update(gvr schema.GroupVersionResource, u *unstructured.Unstructured) {
	h.t.Helper()
	if _, err := h.client.Resource(gvr).Namespace(u.GetNamespace()).Update(context.Background(), u, metav1.UpdateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) delete(gvr schema.GroupVersionResource, ns, name string) {
	h.t.Helper()
	if err := h.client.Resource(gvr).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

type ev struct {
	typ watch.EventType
	key string
	msg string
}

func describe(e watch.Event) ev {
	m, _ := meta.Accessor(e.Object)
	out := ev{typ: e.Type, key: m.GetNamespace() + "/" + m.GetName()}
	data, _ := json.Marshal(e.Object)
	var o struct {
		Targets []struct {
			Policies []struct {
				Sources []struct{ Name, Message string }
			}
		}
	}
	_ = json.Unmarshal(data, &o)
	for _, t := range o.Targets {
		for _, p := range t.Policies {
			for _, s := range p.Sources {
				out.msg += s.Name + "=" + s.Message + ";"
			}
		}
	}
	return out
}

func next(t *testing.T, w watch.Interface) ev {
	t.Helper()
	select {
	case e := <-w.ResultChan():
		return describe(e)
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for a watch event")
		return ev{}
	}
}

func none(t *testing.T, w watch.Interface, d time.Duration) {
	t.Helper()
	select {
	case e := <-w.ResultChan():
		t.Fatalf("unexpected watch event %+v", describe(e))
	case <-time.After(d):
	}
}

func snapshotJSON(t *testing.T, b *Backend) (string, uint64) {
	t.Helper()
	objs, rv, err := b.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(objs)
	return string(data), rv
}

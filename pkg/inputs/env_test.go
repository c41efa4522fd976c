package inputs

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

var (
	routeGVR       = schema.GroupVersionResource{Group: GatewayAPIGroup, Version: "v1", Resource: "httproutes"}
	routeV1beta1   = schema.GroupVersionResource{Group: GatewayAPIGroup, Version: "v1beta1", Resource: "httproutes"}
	retryGVR       = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "retrypolicies"}
	routeGK        = schema.GroupKind{Group: GatewayAPIGroup, Kind: "HTTPRoute"}
	retryGK        = schema.GroupKind{Group: "example.com", Kind: "RetryPolicy"}
	serviceGK      = schema.GroupKind{Kind: "Service"}
	policyLabelKey = "gateway.networking.k8s.io/policy"
)

// sinkEvent is one call the Manager made on the sink.
type sinkEvent struct {
	op        string // "upsert" or "delete"
	gk        schema.GroupKind
	namespace string
	name      string
	obj       *unstructured.Unstructured // upsert only
}

func (e sinkEvent) String() string {
	return fmt.Sprintf("%s %s %s/%s", e.op, e.gk, e.namespace, e.name)
}

// recordingSink records every call and, like the engine, derives the policy
// resources from the CRDs labeled as policies it was given.
type recordingSink struct {
	mu     sync.Mutex
	events []sinkEvent
	crds   map[string]*unstructured.Unstructured
}

func (s *recordingSink) Upsert(obj *unstructured.Unstructured) {
	s.mu.Lock()
	defer s.mu.Unlock()
	gk := obj.GroupVersionKind().GroupKind()
	s.events = append(s.events, sinkEvent{op: "upsert", gk: gk, namespace: obj.GetNamespace(), name: obj.GetName(), obj: obj})
	if gk.Kind == "CustomResourceDefinition" {
		s.crds[obj.GetName()] = obj
	}
}

func (s *recordingSink) Delete(gk schema.GroupKind, namespace, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, sinkEvent{op: "delete", gk: gk, namespace: namespace, name: name})
	if gk.Kind == "CustomResourceDefinition" {
		delete(s.crds, name)
	}
}

func (s *recordingSink) PolicyResources() []schema.GroupVersionResource {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []schema.GroupVersionResource
	for _, crd := range s.crds {
		if _, ok := crd.GetLabels()[policyLabelKey]; !ok {
			continue
		}
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
		out = append(out, schema.GroupVersionResource{Group: group, Version: ServedVersion(crd), Resource: plural})
	}
	return out
}

// since returns the events from index i on.
func (s *recordingSink) since(i int) []sinkEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sinkEvent(nil), s.events[i:]...)
}

func (s *recordingSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.events)
}

// env runs a Manager on a fake dynamic client whose watches the test drives:
// every Watch call gets a fresh fake watcher, so that events (and a watch
// expiry) reach the informers only when the test sends them, and a change
// made only in the tracker is seen by the next list alone.
type env struct {
	t      *testing.T
	client *dynamicfake.FakeDynamicClient
	sink   *recordingSink
	m      *Manager

	mu       sync.Mutex
	watchers map[schema.GroupVersionResource][]*watch.RaceFreeFakeWatcher
}

func newEnv(t *testing.T, objs ...runtime.Object) *env {
	t.Helper()
	e := &env{t: t, sink: &recordingSink{crds: map[string]*unstructured.Unstructured{}}, watchers: map[schema.GroupVersionResource][]*watch.RaceFreeFakeWatcher{}}
	e.client = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		CRDResource:       "CustomResourceDefinitionList",
		NamespaceResource: "NamespaceList",
		ServiceResource:   "ServiceList",
		routeGVR:          "HTTPRouteList",
		routeV1beta1:      "HTTPRouteList",
		retryGVR:          "RetryPolicyList",
	}, objs...)
	e.client.PrependWatchReactor("*", func(a clienttesting.Action) (bool, watch.Interface, error) {
		w := watch.NewRaceFreeFake()
		e.mu.Lock()
		e.watchers[a.GetResource()] = append(e.watchers[a.GetResource()], w)
		e.mu.Unlock()
		return true, w, nil
	})
	e.m = NewManager(e.client, e.sink)
	e.m.SetSyncTimeout(0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.m.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	if !e.m.WaitForSync(ctx) {
		t.Fatal("informers did not sync")
	}
	return e
}

// eventually polls cond; the deadline only stops a broken test from hanging.
func (e *env) eventually(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// watcher returns the n-th watch (from 1) started on gvr, waiting for it.
func (e *env) watcher(gvr schema.GroupVersionResource, n int) *watch.RaceFreeFakeWatcher {
	e.t.Helper()
	var w *watch.RaceFreeFakeWatcher
	e.eventually(fmt.Sprintf("watch %d of %s", n, gvr), func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		if ws := e.watchers[gvr]; len(ws) >= n {
			w = ws[n-1]
			return true
		}
		return false
	})
	return w
}

// watches counts the watches started on gvr, at least one: an informer is
// synced once its list reached the sink, which can be before its reflector
// started the first watch; the caller then waits for that watch.
func (e *env) watches(gvr schema.GroupVersionResource) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return max(len(e.watchers[gvr]), 1)
}

// handle returns the running informer of gvr, waiting for it to be started
// and synced.
func (e *env) handle(gvr schema.GroupVersionResource) *handle {
	e.t.Helper()
	var h *handle
	e.eventually("informer of "+gvr.String(), func() bool {
		e.m.mu.Lock()
		defer e.m.mu.Unlock()
		h = e.m.static[gvr.GroupResource()]
		if h == nil {
			h = e.m.dynamic[gvr.GroupResource()]
		}
		return h != nil && h.gvr == gvr && h.hasSynced()
	})
	return h
}

// tracker applies op to the fake cluster without any watch event.
func (e *env) tracker(op string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
	e.t.Helper()
	var err error
	switch op {
	case "create":
		err = e.client.Tracker().Create(gvr, obj.DeepCopy(), obj.GetNamespace())
	case "update":
		err = e.client.Tracker().Update(gvr, obj.DeepCopy(), obj.GetNamespace())
	case "delete":
		err = e.client.Tracker().Delete(gvr, obj.GetNamespace(), obj.GetName())
	}
	if err != nil {
		e.t.Fatal(err)
	}
}

// send applies op to the fake cluster and sends its event on the current
// watch of gvr.
func (e *env) send(op string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
	e.t.Helper()
	e.tracker(op, gvr, obj)
	w := e.watcher(gvr, e.watches(gvr))
	switch op {
	case "create":
		w.Add(obj.DeepCopy())
	case "update":
		w.Modify(obj.DeepCopy())
	case "delete":
		w.Delete(obj.DeepCopy())
	}
}

// expire ends the current watch of gvr with 410 Expired, as the API server
// does when the informer fell too far behind; the reflector relists.
func (e *env) expire(gvr schema.GroupVersionResource) {
	e.t.Helper()
	n := e.watches(gvr)
	e.watcher(gvr, n).Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version"})
	// The relist is done once its watch started.
	e.watcher(gvr, n+1)
}

// waitFor waits until the sink got the events of groups after event index
// from, and checks them: the groups in order, the events of a group in any
// order (a list comes in the API server's order). It returns the events,
// each group sorted by name.
func (e *env) waitFor(from int, groups ...[]string) []sinkEvent {
	e.t.Helper()
	n := 0
	for _, g := range groups {
		n += len(g)
	}
	var got []sinkEvent
	e.eventually(fmt.Sprintf("sink events %v", groups), func() bool {
		got = e.sink.since(from)
		return len(got) >= n
	})
	var gotNames, wantNames []string
	i := 0
	for _, g := range groups {
		part := got[i:min(i+len(g), len(got))]
		sort.Slice(part, func(a, b int) bool { return part[a].String() < part[b].String() })
		for _, ev := range part {
			gotNames = append(gotNames, ev.String())
		}
		w := append([]string(nil), g...)
		sort.Strings(w)
		wantNames = append(wantNames, w...)
		i += len(g)
	}
	for _, ev := range got[i:] {
		gotNames = append(gotNames, ev.String())
	}
	if !reflect.DeepEqual(gotNames, wantNames) {
		e.t.Fatalf("sink events\n got %v\nwant %v", gotNames, wantNames)
	}
	return got
}

func newDeltas(typ string, obj interface{}) cache.Deltas {
	return cache.Deltas{{Type: cache.DeltaType(typ), Object: obj}}
}

func testCRD(group, kind, plural string, policy bool, versions ...string) *unstructured.Unstructured {
	var vs []interface{}
	for i, v := range versions {
		vs = append(vs, map[string]interface{}{"name": v, "served": true, "storage": i == len(versions)-1})
	}
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata": map[string]interface{}{
			"name":        plural + "." + group,
			"annotations": map[string]interface{}{"kubectl.kubernetes.io/last-applied-configuration": "{...}"},
		},
		"spec": map[string]interface{}{
			"group":    group,
			"scope":    "Namespaced",
			"names":    map[string]interface{}{"kind": kind, "plural": plural, "listKind": kind + "List"},
			"versions": vs,
		},
	}}
	if policy {
		u.SetLabels(map[string]string{policyLabelKey: "inherited"})
	}
	return u
}

func testService(ns, name string, port int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "v1",
		"kind":       "Service",
		"metadata":   map[string]interface{}{"name": name, "namespace": ns},
		"spec": map[string]interface{}{
			"ports":     []interface{}{map[string]interface{}{"name": "http", "port": port}},
			"clusterIP": "10.0.0.1",
		},
	}}
}

func testRoute(version, ns, name, host string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": GatewayAPIGroup + "/" + version,
		"kind":       "HTTPRoute",
		"metadata":   map[string]interface{}{"name": name, "namespace": ns},
		"spec":       map[string]interface{}{"hostnames": []interface{}{host}},
	}}
}

func testPolicy(ns, name, value string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "example.com/v1",
		"kind":       "RetryPolicy",
		"metadata":   map[string]interface{}{"name": name, "namespace": ns, "managedFields": []interface{}{map[string]interface{}{"manager": "kubectl"}}},
		"spec":       map[string]interface{}{"value": value},
	}}
}

package live

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/inputs"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/cache"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/resourceversion"
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

func TestPolicyLifecycleWatchEvents(t *testing.T) {
	h := newHarness(t, t.TempDir(), time.Millisecond,
		crd("example.com", "RetryPolicy", "retrypolicies", true),
		crd("gateway.networking.k8s.io", "HTTPRoute", "httproutes", false),
		route("default", "r"))
	h.start()
	h.watching("retrypolicies", 1)
	if h.engine.upserts("HTTPRoute") != 1 {
		t.Errorf("HTTPRoute upserts = %d, want 1", h.engine.upserts("HTTPRoute"))
	}
	ctx := context.Background()
	b := h.live.EffectivePolicies()
	_, rv, _ := b.List(ctx, "")
	w, err := b.Watch(ctx, "", rv)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	p := policy("default", "p1", "r", "1")
	h.create(retryGVR, p)
	if got, want := next(t, w), (ev{watch.Added, "default/r", "p1=1;"}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	p.Object["spec"].(map[string]interface{})["value"] = "2"
	h.update(retryGVR, p)
	if got, want := next(t, w), (ev{watch.Modified, "default/r", "p1=2;"}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	// An edit that does not change the output: no event. The next event is
	// the one of the next real change.
	p.SetLabels(map[string]string{"irrelevant": "yes"})
	h.update(retryGVR, p)
	none(t, w, 100*time.Millisecond)
	h.create(retryGVR, policy("default", "p2", "s", "x"))
	if got, want := next(t, w), (ev{watch.Added, "default/s", "p2=x;"}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	h.delete(retryGVR, "default", "p1")
	if got, want := next(t, w), (ev{watch.Deleted, "default/r", "p1=2;"}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	none(t, w, 50*time.Millisecond)

	objs, _, _ := b.List(ctx, "")
	if len(objs) != 1 {
		t.Errorf("List = %d objects, want 1", len(objs))
	}
	if _, err := b.Get(ctx, "default", "r"); err == nil {
		t.Error("Get of a deleted output succeeded")
	}
}

func TestGetAndListComputeDirtyKeys(t *testing.T) {
	// A debounce of nearly a minute: only Get and List bring outputs up to date.
	h := newHarness(t, t.TempDir(), 59*time.Second, crd("example.com", "RetryPolicy", "retrypolicies", true))
	h.start()
	h.watching("retrypolicies", 1)
	ctx := context.Background()
	b := h.live.EffectivePolicies()

	h.create(retryGVR, policy("default", "p1", "r", "1"))
	h.eventually("engine saw p1", func() bool { return len(h.engine.Keys()) == 1 })
	obj, err := b.Get(ctx, "default", "r")
	if err != nil {
		t.Fatalf("Get of a dirty key: %v", err)
	}
	if got := describe(watch.Event{Object: obj}).msg; got != "p1=1;" {
		t.Errorf("Get = %q", got)
	}

	h.create(retryGVR, policy("default", "p2", "s", "2"))
	h.eventually("engine saw p2", func() bool { return len(h.engine.Keys()) == 2 })
	objs, _, _ := b.List(ctx, "default")
	if len(objs) != 2 {
		t.Errorf("List = %d objects, want 2", len(objs))
	}

	// Cluster-scoped outputs go to the other resource.
	cp := policy("", "gc-policy", "gc", "3")
	cp.Object["spec"].(map[string]interface{})["targetRef"].(map[string]interface{})["kind"] = "GatewayClass"
	h.create(retryGVR, cp)
	h.eventually("engine saw gc-policy", func() bool { return len(h.engine.Keys()) == 3 })
	if _, err := h.live.ClusterEffectivePolicies().Get(ctx, "", "gc"); err != nil {
		t.Errorf("cluster Get: %v", err)
	}
}

func TestCRDsComeAndGo(t *testing.T) {
	h := newHarness(t, t.TempDir(), time.Millisecond,
		policy("default", "p1", "r", "1"), // exists before its CRD
		route("default", "r"))
	h.start()
	if got := h.live.Inputs().Running(); len(got) != 0 {
		t.Fatalf("running before any CRD: %v", got)
	}
	ctx := context.Background()
	b := h.live.EffectivePolicies()
	_, rv, _ := b.List(ctx, "")
	w, _ := b.Watch(ctx, "", rv)
	defer w.Stop()

	// A Gateway API CRD appears: its informer starts.
	h.create(inputs.CRDResource, crd("gateway.networking.k8s.io", "HTTPRoute", "httproutes", false))
	h.eventually("HTTPRoute informer", func() bool { return h.engine.upserts("HTTPRoute") == 1 })

	// A policy CRD appears: its informer starts and picks up the policy.
	h.create(inputs.CRDResource, crd("example.com", "RetryPolicy", "retrypolicies", true))
	if got, want := next(t, w), (ev{watch.Added, "default/r", "p1=1;"}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := fmt.Sprint(h.live.Inputs().Running()); got != "[example.com/v1, Resource=retrypolicies gateway.networking.k8s.io/v1, Resource=httproutes]" {
		t.Errorf("running = %s", got)
	}

	// The policy CRD goes away: the informer stops and the output is removed.
	h.delete(inputs.CRDResource, "", "retrypolicies.example.com")
	if got, want := next(t, w), (ev{watch.Deleted, "default/r", "p1=1;"}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	h.eventually("informer stopped", func() bool { return len(h.live.Inputs().Running()) == 1 })
	if got := len(h.engine.Keys()); got != 0 {
		t.Errorf("engine still has %d outputs", got)
	}
	// Later changes to the (now unserved) kind are not seen.
	h.create(retryGVR, policy("default", "p2", "s", "2"))
	none(t, w, 100*time.Millisecond)
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

func TestRestartServesCachedObjects(t *testing.T) {
	dir := t.TempDir()
	objs := []runtime.Object{
		crd("example.com", "RetryPolicy", "retrypolicies", true),
		policy("default", "p1", "r", "1"),
		policy("default", "p2", "s", "2"),
		policy("other", "p3", "t", "3"),
	}
	h1 := newHarness(t, dir, time.Millisecond, objs...)
	h1.start()
	h1.watching("retrypolicies", 1)
	h1.create(retryGVR, policy("default", "p4", "r", "4")) // a second resourceVersion
	h1.eventually("p4", func() bool {
		o, err := h1.live.EffectivePolicies().Get(context.Background(), "default", "r")
		return err == nil && describe(watch.Event{Object: o}).msg == "p1=1;p4=4;"
	})
	before, rvBefore := snapshotJSON(t, h1.live.EffectivePolicies())
	epoch := h1.live.stores.namespaced.Epoch()
	h1.stop()
	if resourceversion.CounterOf(rvBefore) < 2 || resourceversion.EpochOf(rvBefore) != epoch {
		t.Fatalf("resourceVersion %d, want at least 2", rvBefore)
	}

	// While the server was down, p2 was deleted; p4 is still there.
	h2 := newHarness(t, dir, time.Millisecond, objs[0], objs[1], objs[3], policy("default", "p4", "r", "4"))
	after, rvAfter := snapshotJSON(t, h2.live.EffectivePolicies())
	if after != before || rvAfter != rvBefore {
		t.Fatalf("before recomputation the restarted server serves\n%s @%d\nwant\n%s @%d", after, rvAfter, before, rvBefore)
	}
	if e, ce := h2.live.stores.namespaced.Epoch(), h2.live.stores.cluster.Epoch(); e != epoch || ce != epoch {
		t.Fatalf("epochs after restart %d, %d; want the cache's %d", e, ce, epoch)
	}
	w, err := h2.live.EffectivePolicies().Watch(context.Background(), "", rvAfter)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	h2.start()
	// Recomputation deletes s (a cached key without output) and leaves the
	// unchanged r and t alone.
	if got, want := next(t, w), (ev{watch.Deleted, "default/s", "p2=2;"}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	none(t, w, 100*time.Millisecond)
	final, rvFinal := snapshotJSON(t, h2.live.EffectivePolicies())
	if rvFinal <= rvBefore {
		t.Errorf("resourceVersion went from %d to %d", rvBefore, rvFinal)
	}
	var got []map[string]interface{}
	_ = json.Unmarshal([]byte(final), &got)
	if len(got) != 2 {
		t.Fatalf("after recomputation: %s", final)
	}
	for _, o := range got {
		md := o["metadata"].(map[string]interface{})
		if rv := md["resourceVersion"]; rv == fmt.Sprint(rvFinal) {
			t.Errorf("unchanged object %v got a new resourceVersion", md["name"])
		}
	}

	// And again: the file now holds the post-recomputation state.
	h2.stop()
	h3 := newHarness(t, dir, time.Millisecond)
	again, rvAgain := snapshotJSON(t, h3.live.EffectivePolicies())
	if again != final || rvAgain != rvFinal {
		t.Errorf("second restart serves\n%s @%d\nwant\n%s @%d", again, rvAgain, final, rvFinal)
	}
}

func TestCorruptCacheIsRebuilt(t *testing.T) {
	tests := []struct {
		name  string
		write func(t *testing.T, path string)
	}{
		{"garbage", func(t *testing.T, path string) {
			_ = os.WriteFile(path, []byte("garbage garbage garbage garbage garbage garbage garbage garbage garbage"), 0o600)
		}},
		{"truncated", func(t *testing.T, path string) {
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			var size int64
			_ = db.View(func(tx *bolt.Tx) error { size = tx.Size(); return nil })
			_ = db.Close()
			_ = os.Truncate(path, size-int64(os.Getpagesize()))
		}},
		{"foreign bbolt file", func(t *testing.T, path string) {
			_ = os.Remove(path)
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			_ = db.Update(func(tx *bolt.Tx) error {
				b, _ := tx.CreateBucket([]byte("effectivepolicies"))
				return b.Put([]byte("default/r"), []byte(`{"metadata":{"name":"r","namespace":"default","resourceVersion":"1"}}`))
			})
			_ = db.Close()
		}},
		{"undecodable object", func(t *testing.T, path string) {
			db, _, _, err := cache.Open(filepath.Dir(path), encoded.CacheFormat, []string{ResourceEffectivePolicies, ResourceClusterEffectivePolicies}, nil)
			if err != nil {
				t.Fatal(err)
			}
			_ = db.Write(cache.Batch{ResourceEffectivePolicies: {Entries: []cache.Entry{{Key: "default/r", Data: []byte(`{"targets": 5}`)}}, ResourceVersion: resourceversion.Make(db.Epoch(), 99)}}, false)
			_ = db.Close()
		}},
		{"object under the wrong key", func(t *testing.T, path string) {
			db, _, _, _ := cache.Open(filepath.Dir(path), encoded.CacheFormat, []string{ResourceEffectivePolicies, ResourceClusterEffectivePolicies}, nil)
			_ = db.Write(cache.Batch{ResourceEffectivePolicies: {Entries: []cache.Entry{{Key: "default/zzz", Data: []byte(`{"metadata":{"name":"r","namespace":"default","resourceVersion":"1"}}`)}}, ResourceVersion: resourceversion.Make(db.Epoch(), 99)}}, false)
			_ = db.Close()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			objs := []runtime.Object{crd("example.com", "RetryPolicy", "retrypolicies", true), policy("default", "p1", "r", "1")}
			h1 := newHarness(t, dir, time.Millisecond, objs...)
			h1.start()
			h1.stop()
			tt.write(t, filepath.Join(dir, cache.FileName))

			h2 := newHarness(t, dir, time.Millisecond, objs...)
			if got, rv := snapshotJSON(t, h2.live.EffectivePolicies()); got != "[]" || rv != resourceversion.Make(resourceversion.EpochOf(rv), 0) {
				t.Fatalf("a corrupt cache was served: %s @%d", got, rv)
			}
			if h2.live.CacheError() != nil {
				t.Errorf("cache not usable after rebuild: %v", h2.live.CacheError())
			}
			h2.start()
			if got, _ := snapshotJSON(t, h2.live.EffectivePolicies()); got == "[]" {
				t.Error("nothing recomputed")
			}
			h2.stop()
			h3 := newHarness(t, dir, time.Millisecond)
			if got, _ := snapshotJSON(t, h3.live.EffectivePolicies()); got == "[]" {
				t.Error("rebuilt cache is empty")
			}
		})
	}
}

func TestUnwritableCacheDirServesFromMemory(t *testing.T) {
	f := filepath.Join(t.TempDir(), "not-a-dir")
	_ = os.WriteFile(f, nil, 0o600)
	h := newHarness(t, f, time.Millisecond, crd("example.com", "RetryPolicy", "retrypolicies", true), policy("default", "p1", "r", "1"))
	if h.live.CacheError() == nil {
		t.Fatal("no cache error reported")
	}
	h.start()
	if _, err := h.live.EffectivePolicies().Get(context.Background(), "default", "r"); err != nil {
		t.Errorf("Get: %v", err)
	}
	if err := h.live.CacheCheck().Check(nil); err != nil {
		t.Errorf("cache check failed: %v", err)
	}
}

func TestReadyCheck(t *testing.T) {
	h := newHarness(t, "", time.Millisecond, crd("example.com", "RetryPolicy", "retrypolicies", true))
	if err := h.live.ReadyCheck().Check(nil); err == nil {
		t.Error("ready before Run")
	}
	h.start()
	if err := h.live.ReadyCheck().Check(nil); err != nil {
		t.Errorf("not ready after the first computation: %v", err)
	}
}

func TestPolicyCRDVersionSwitch(t *testing.T) {
	p1v2 := policy("default", "p1", "r", "1")
	p1v2.SetAPIVersion("example.com/v2")
	h := newHarness(t, t.TempDir(), time.Millisecond,
		crd("example.com", "RetryPolicy", "retrypolicies", true),
		policy("default", "p1", "r", "1"), policy("default", "p2", "s", "2"))
	h.start()
	h.watching("retrypolicies", 1)
	ctx := context.Background()
	b := h.live.EffectivePolicies()
	objs, rv, _ := b.List(ctx, "")
	if len(objs) != 2 {
		t.Fatalf("List = %d objects, want 2", len(objs))
	}
	w, _ := b.Watch(ctx, "", rv)
	defer w.Stop()

	// The served version becomes v2, where only p1 exists: s goes away, r
	// does not flap.
	h.create(retryV2GVR, p1v2)
	c := crd("example.com", "RetryPolicy", "retrypolicies", true)
	c.Object["spec"].(map[string]interface{})["versions"] = []interface{}{
		map[string]interface{}{"name": "v1", "served": true, "storage": false},
		map[string]interface{}{"name": "v2", "served": true, "storage": true},
	}
	h.update(inputs.CRDResource, c)
	if got, want := next(t, w), (ev{watch.Deleted, "default/s", "p2=2;"}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	none(t, w, 100*time.Millisecond)
	if got := fmt.Sprint(h.live.Inputs().Running()); got != "[example.com/v2, Resource=retrypolicies]" {
		t.Errorf("running = %s", got)
	}
}

// flakyFile fails writes while failing is set.
type flakyFile struct {
	cacheFile
	mu       sync.Mutex
	failing  bool
	replaces int
}

func (f *flakyFile) Write(b cache.Batch, replace bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failing {
		return fmt.Errorf("no space left on device")
	}
	if replace {
		f.replaces++
	}
	return f.cacheFile.Write(b, replace)
}

func TestFailedWritesServeFromMemoryAndRecover(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, dir, time.Millisecond, crd("example.com", "RetryPolicy", "retrypolicies", true), policy("default", "p1", "r", "1"))
	ff := &flakyFile{cacheFile: h.live.cache.db}
	h.live.cache.db = ff
	h.start()
	h.watching("retrypolicies", 1)
	ctx := context.Background()
	b := h.live.EffectivePolicies()

	ff.mu.Lock()
	ff.failing = true
	ff.mu.Unlock()
	h.create(retryGVR, policy("default", "p2", "s", "2"))
	h.eventually("s served", func() bool { _, err := b.Get(ctx, "default", "s"); return err == nil })
	if h.live.CacheError() == nil {
		t.Error("failed write not reported")
	}
	if err := h.live.CacheCheck().Check(nil); err != nil {
		t.Errorf("cache check must pass: %v", err)
	}

	ff.mu.Lock()
	ff.failing = false
	ff.mu.Unlock()
	h.create(retryGVR, policy("default", "p3", "t", "3"))
	h.eventually("t served", func() bool { _, err := b.Get(ctx, "default", "t"); return err == nil })
	// The store applies before the batch is written: wait for the write.
	h.eventually("cache recovered", func() bool { return h.live.CacheError() == nil })
	ff.mu.Lock()
	if ff.replaces != 1 {
		t.Errorf("full rewrites = %d, want 1", ff.replaces)
	}
	ff.mu.Unlock()
	want, wantRV := snapshotJSON(t, b)
	h.stop()
	h2 := newHarness(t, dir, time.Millisecond)
	if got, rv := snapshotJSON(t, h2.live.EffectivePolicies()); got != want || rv != wantRV {
		t.Errorf("after recovery the cache holds\n%s @%d\nwant\n%s @%d", got, rv, want, wantRV)
	}
}

func TestForbiddenPolicyKindDoesNotBlockReadiness(t *testing.T) {
	h := newHarness(t, t.TempDir(), time.Millisecond,
		crd("example.com", "RetryPolicy", "retrypolicies", true),
		crd("gateway.networking.k8s.io", "HTTPRoute", "httproutes", false),
		route("default", "r"))
	h.client.PrependReactor("list", "retrypolicies", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(retryGVR.GroupResource(), "", fmt.Errorf("no RBAC"))
	})
	h.start() // fails the test unless ready
	if got := h.live.Inputs().Failing(); len(got) != 1 {
		t.Errorf("failing informers = %v, want retrypolicies", got)
	}
	if h.engine.upserts("HTTPRoute") != 1 {
		t.Error("the other informers did not deliver")
	}
}

func TestUnsyncedInformerTimesOut(t *testing.T) {
	h := newHarness(t, t.TempDir(), time.Millisecond, crd("example.com", "RetryPolicy", "retrypolicies", true))
	h.client.PrependReactor("list", "retrypolicies", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, fmt.Errorf("connection refused")
	})
	h.live.Inputs().SetSyncTimeout(200 * time.Millisecond)
	start := time.Now()
	h.start()
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("ready after %v, before the sync timeout", d)
	}
}

// TestFreshCacheIsAnotherHistory: a server with another (or a rebuilt) cache
// numbers resourceVersions in a new epoch, so a resourceVersion of the first
// one is not resumed there (410 Gone) even when its counter is in range.
func TestFreshCacheIsAnotherHistory(t *testing.T) {
	objs := []runtime.Object{crd("example.com", "RetryPolicy", "retrypolicies", true), policy("default", "p1", "r", "1")}
	h1 := newHarness(t, t.TempDir(), time.Millisecond, objs...)
	h1.start()
	h1.eventually("r", func() bool {
		_, err := h1.live.EffectivePolicies().Get(context.Background(), "default", "r")
		return err == nil
	})
	_, rv1 := snapshotJSON(t, h1.live.EffectivePolicies())
	h1.stop()

	h2 := newHarness(t, t.TempDir(), time.Millisecond, objs...)
	h2.start()
	h2.eventually("r", func() bool {
		_, err := h2.live.EffectivePolicies().Get(context.Background(), "default", "r")
		return err == nil
	})
	_, rv2 := snapshotJSON(t, h2.live.EffectivePolicies())
	if resourceversion.EpochOf(rv1) == resourceversion.EpochOf(rv2) {
		t.Fatalf("two fresh caches share epoch %d", resourceversion.EpochOf(rv1))
	}
	if resourceversion.CounterOf(rv1) != resourceversion.CounterOf(rv2) {
		t.Logf("counters differ: %d, %d", rv1, rv2)
	}
	if _, err := h2.live.EffectivePolicies().Watch(context.Background(), "", rv1); !apierrors.IsResourceExpired(err) || !strings.Contains(err.Error(), "another server instance") {
		t.Errorf("watch from the other server's rv %d: %v", rv1, err)
	}
	if !h2.live.EffectivePolicies().ForeignResourceVersion(rv1) || h2.live.EffectivePolicies().ForeignResourceVersion(rv2) {
		t.Error("ForeignResourceVersion")
	}
}

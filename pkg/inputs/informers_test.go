package inputs

import (
	"fmt"
	"reflect"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// kindCase is one input kind the Manager watches: how to make an object of it
// with a distinguishing spec value, and the CRDs (if any) that start its
// informer.
type kindCase struct {
	name string
	gvr  schema.GroupVersionResource
	gk   schema.GroupKind
	crds []*unstructured.Unstructured
	make func(ns, name, value string) *unstructured.Unstructured
	// value reads the distinguishing value back from a delivered object.
	value func(u *unstructured.Unstructured) string
}

func kindCases() []kindCase {
	return []kindCase{
		{
			name: "Service", gvr: ServiceResource, gk: serviceGK,
			make: func(ns, name, value string) *unstructured.Unstructured {
				var port int64
				if _, err := fmt.Sscan(value, &port); err != nil {
					panic(fmt.Sprintf("test value %q is not a port: %v", value, err))
				}
				return testService(ns, name, port)
			},
			value: func(u *unstructured.Unstructured) string {
				ports, _, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
				if len(ports) != 1 {
					return ""
				}
				return fmt.Sprint(ports[0].(map[string]interface{})["port"])
			},
		},
		{
			name: "HTTPRoute", gvr: routeGVR, gk: routeGK,
			crds: []*unstructured.Unstructured{testCRD(GatewayAPIGroup, "HTTPRoute", "httproutes", false, "v1")},
			make: func(ns, name, value string) *unstructured.Unstructured {
				return testRoute("v1", ns, name, value)
			},
			value: func(u *unstructured.Unstructured) string {
				hosts, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "hostnames")
				if len(hosts) != 1 {
					return ""
				}
				return hosts[0]
			},
		},
		{
			name: "policy", gvr: retryGVR, gk: retryGK,
			crds: []*unstructured.Unstructured{testCRD("example.com", "RetryPolicy", "retrypolicies", true, "v1")},
			make: testPolicy,
			value: func(u *unstructured.Unstructured) string {
				v, _, _ := unstructured.NestedString(u.Object, "spec", "value")
				return v
			},
		},
	}
}

// start returns an env whose cluster holds the case's CRDs and objs, with
// the case's informer synced.
func (kc kindCase) start(t *testing.T, objs ...*unstructured.Unstructured) (*env, *handle) {
	t.Helper()
	var all []runtime.Object
	for _, c := range kc.crds {
		all = append(all, c.DeepCopy())
	}
	for _, o := range objs {
		all = append(all, o.DeepCopy())
	}
	e := newEnv(t, all...)
	return e, e.handle(kc.gvr)
}

// assertStubs checks that h's store remembers exactly keys, with the case's
// group/kind, and none of the objects.
func assertStubs(t *testing.T, h *handle, gk schema.GroupKind, keys ...string) {
	t.Helper()
	sort.Strings(keys)
	if got := h.objs.keys(); !reflect.DeepEqual(got, append([]string{}, keys...)) {
		t.Errorf("store keys = %v, want %v", got, keys)
	}
	h.objs.mu.RLock()
	defer h.objs.mu.RUnlock()
	for k, en := range h.objs.items {
		if en.obj != nil {
			t.Errorf("store keeps the object of %s (spec %v); it must keep only its key", k, en.obj.Object["spec"])
		}
		if *en.gk != gk {
			t.Errorf("store entry %s has group/kind %v, want %v", k, *en.gk, gk)
		}
	}
	if len(h.objs.gks) > 1 {
		t.Errorf("store interned %d group/kinds, want 1", len(h.objs.gks))
	}
}

func TestInformerDeliversObjectsAndKeepsStubs(t *testing.T) {
	for _, kc := range kindCases() {
		t.Run(kc.name, func(t *testing.T) {
			e, h := kc.start(t, kc.make("a", "one", "80"), kc.make("a", "two", "81"))
			// HasSynced implies the initial list reached the sink.
			var listed []string
			for _, ev := range e.sink.since(0) {
				if ev.gk == kc.gk {
					if ev.op != "upsert" || kc.value(ev.obj) == "" {
						t.Errorf("initial list: %v with value %q", ev, kc.value(ev.obj))
					}
					listed = append(listed, ev.namespace+"/"+ev.name)
				}
			}
			sort.Strings(listed)
			if want := []string{"a/one", "a/two"}; !reflect.DeepEqual(listed, want) {
				t.Fatalf("initial list delivered %v, want %v", listed, want)
			}
			assertStubs(t, h, kc.gk, "a/one", "a/two")

			from := e.sink.count()
			e.send("create", kc.gvr, kc.make("b", "three", "82"))
			e.send("update", kc.gvr, kc.make("a", "one", "90"))
			e.send("delete", kc.gvr, kc.make("a", "two", "81"))
			got := e.waitFor(from,
				[]string{fmt.Sprintf("upsert %s b/three", kc.gk)},
				[]string{fmt.Sprintf("upsert %s a/one", kc.gk)},
				[]string{fmt.Sprintf("delete %s a/two", kc.gk)},
			)
			for i, want := range []string{"82", "90"} {
				if v := kc.value(got[i].obj); v != want {
					t.Errorf("%v carries value %q, want %q (the whole trimmed object)", got[i], v, want)
				}
				if got[i].obj.GetManagedFields() != nil {
					t.Errorf("%v was not trimmed", got[i])
				}
			}
			assertStubs(t, h, kc.gk, "a/one", "b/three")
		})
	}
}

func TestCRDInformerKeepsTrimmedCRDs(t *testing.T) {
	crd := testCRD(GatewayAPIGroup, "HTTPRoute", "httproutes", false, "v1")
	e := newEnv(t, crd)
	h := e.handle(CRDResource)
	objs := h.objs.objects()
	if len(objs) != 1 || objs[0].GetName() != crd.GetName() {
		t.Fatalf("CRD store holds %v, want the CRD", objs)
	}
	if v := ServedVersion(objs[0]); v != "v1" {
		t.Errorf("stored CRD serves %q, want v1: reconcile reads it back", v)
	}
	if objs[0].GetAnnotations() != nil {
		t.Errorf("stored CRD was not trimmed: %v", objs[0].GetAnnotations())
	}
}

func TestRelistDeletesVanishedObjects(t *testing.T) {
	for _, kc := range kindCases() {
		t.Run(kc.name, func(t *testing.T) {
			e, h := kc.start(t, kc.make("a", "kept", "80"), kc.make("a", "gone", "81"), kc.make("a", "changed", "82"))
			// Changes the watch misses.
			e.tracker("delete", kc.gvr, kc.make("a", "gone", "81"))
			e.tracker("update", kc.gvr, kc.make("a", "changed", "92"))
			e.tracker("create", kc.gvr, kc.make("b", "new", "83"))
			from := e.sink.count()
			e.expire(kc.gvr)
			got := e.waitFor(from,
				[]string{fmt.Sprintf("delete %s a/gone", kc.gk)},
				[]string{
					fmt.Sprintf("upsert %s a/changed", kc.gk),
					fmt.Sprintf("upsert %s a/kept", kc.gk),
					fmt.Sprintf("upsert %s b/new", kc.gk),
				},
			)
			for i, want := range map[int]string{1: "92", 2: "80", 3: "83"} {
				if v := kc.value(got[i].obj); v != want {
					t.Errorf("%v carries value %q, want %q", got[i], v, want)
				}
			}
			assertStubs(t, h, kc.gk, "a/changed", "a/kept", "b/new")
		})
	}
}

func TestStoppedInformerDeletesItsObjects(t *testing.T) {
	for _, kc := range kindCases() {
		if len(kc.crds) == 0 {
			continue // the static informers run until the server stops
		}
		t.Run(kc.name, func(t *testing.T) {
			e, h := kc.start(t, kc.make("a", "one", "80"), kc.make("b", "two", "81"))
			from := e.sink.count()
			for _, crd := range kc.crds {
				e.send("delete", CRDResource, crd)
			}
			var crds []string
			for _, crd := range kc.crds {
				crds = append(crds, "delete CustomResourceDefinition.apiextensions.k8s.io /"+crd.GetName())
			}
			e.waitFor(from, crds, []string{fmt.Sprintf("delete %s a/one", kc.gk), fmt.Sprintf("delete %s b/two", kc.gk)})
			if r := e.m.Running(); len(r) != 0 {
				t.Errorf("still running: %v", r)
			}
			h.mu.Lock()
			stopped := h.stopped
			h.mu.Unlock()
			if !stopped {
				t.Error("informer not stopped")
			}
		})
	}
}

// TestVersionSwitchDeletesOnlyUnlisted: when a Gateway API CRD's served
// version changes, the objects stay in the engine until the new informer
// has listed them; only those it does not list are deleted.
func TestVersionSwitchDeletesOnlyUnlisted(t *testing.T) {
	crd := testCRD(GatewayAPIGroup, "HTTPRoute", "httproutes", false, "v1beta1")
	e := newEnv(t, crd,
		testRoute("v1beta1", "a", "both", "old.example.com"),
		testRoute("v1beta1", "a", "old-only", "old.example.com"),
		testRoute("v1", "a", "both", "new.example.com"),
		testRoute("v1", "b", "new-only", "new.example.com"),
	)
	old := e.handle(routeV1beta1)
	assertStubs(t, old, routeGK, "a/both", "a/old-only")
	from := e.sink.count()
	e.send("update", CRDResource, testCRD(GatewayAPIGroup, "HTTPRoute", "httproutes", false, "v1beta1", "v1"))
	h := e.handle(routeGVR)
	got := e.waitFor(from,
		[]string{"upsert CustomResourceDefinition.apiextensions.k8s.io /httproutes.gateway.networking.k8s.io"},
		[]string{"upsert HTTPRoute.gateway.networking.k8s.io a/both", "upsert HTTPRoute.gateway.networking.k8s.io b/new-only"},
		[]string{"delete HTTPRoute.gateway.networking.k8s.io a/old-only"},
	)
	if v, _, _ := unstructured.NestedStringSlice(got[1].obj.Object, "spec", "hostnames"); !reflect.DeepEqual(v, []string{"new.example.com"}) {
		t.Errorf("switched informer delivered %v", v)
	}
	assertStubs(t, h, routeGK, "a/both", "b/new-only")
}

// TestProcessIgnoresForeignObjects: whatever the FIFO hands over that is not
// an object (or has no name) is skipped, not a crash.
func TestProcessIgnoresForeignObjects(t *testing.T) {
	e := newEnv(t)
	h := e.handle(ServiceResource)
	from := e.sink.count()
	for _, obj := range []interface{}{
		"not deltas",
		newDeltas("Added", 42),
		newDeltas("Deleted", "nope"),
		newDeltas("ReplacedAll", "not info"),
	} {
		_ = e.m.process(h, obj, false)
	}
	if got := e.sink.since(from); len(got) != 0 {
		t.Errorf("foreign objects reached the sink: %v", got)
	}
}

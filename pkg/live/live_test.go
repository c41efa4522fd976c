package live

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/inputs"
)

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

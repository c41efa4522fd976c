//go:build e2e && long

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	versioned "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned"
	epclient "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned/typed/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/inputs"
)

// The load test's knobs. The numbers are those docs/reliability.md states; the duration can be raised with
// E2E_LOAD_DURATION (a Go duration) for a longer soak.
const (
	loadWatchers    = 200 // half across all namespaces, half in one namespace each
	loadReaders     = 4   // goroutines issuing GETs and LISTs back to back
	loadNamespaces  = 3
	loadChurnPeriod = 150 * time.Millisecond
	// Memory: the median RSS of the last third of the run may exceed the median of the middle
	// third by at most this fraction plus loadRSSSlack (docs/reliability.md, "Load").
	loadRSSFactor = 0.25
	loadRSSSlack  = 16 << 20
)

var colorGVR = schema.GroupVersionResource{Group: "colors.example.com", Version: "v1", Resource: "colorpolicies"}

// TestLongLoad: 200 watchers of EffectivePolicies through the kube-apiserver, a steady stream of
// GETs and LISTs, and policies created, changed and deleted at every level of a small topology
// (GatewayClass, Namespace, Gateway, HTTPRoute, Service) for a bounded time. It asserts that no
// request fails, that every watcher sees each change once and in resourceVersion order, that every
// watcher's state (its initial list plus its events) ends equal to a fresh LIST, that the LIST
// equals a recomputation from the inputs read back from the kube-apiserver, and that the
// server's memory stays flat.
func TestLongLoad(t *testing.T) {
	duration := 60 * time.Second
	if s := os.Getenv("E2E_LOAD_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("E2E_LOAD_DURATION: %v", err)
		}
		duration = d
	}
	seed := time.Now().UnixNano()
	t.Logf("load: %d watchers, %d readers, churn every %s for %s, seed %d", loadWatchers, loadReaders, loadChurnPeriod, duration, seed)
	rng := rand.New(rand.NewSource(seed))

	cfg := restConfig(t)
	// The default client-side limit (5 QPS) would throttle 200 initial lists and the readers;
	// the load must reach the servers.
	cfg.QPS, cfg.Burst = 1000, 2000
	cs, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ep := cs.EffectivepolicyV1alpha1()

	namespaces := setUpLoadTopology(t)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// Watchers: list, then watch from the list's resourceVersion.
	watchers := make([]*loadWatcher, loadWatchers)
	var wg sync.WaitGroup
	started := make(chan error, loadWatchers)
	for i := range watchers {
		ns := "" // all namespaces
		if i%2 == 1 {
			ns = namespaces[(i/2)%len(namespaces)]
		}
		w := &loadWatcher{id: i, namespace: ns, state: map[string]loadEntry{}, objRV: map[string]uint64{}}
		watchers[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(ctx, ep, started)
		}()
	}
	for range watchers {
		if err := <-started; err != nil {
			cancel()
			wg.Wait()
			t.Fatalf("starting a watcher: %v", err)
		}
	}
	t.Logf("load: %d watchers listed and watching", loadWatchers)

	// Memory samples of the server process during the whole run.
	pid := serverPID(t)
	var rss []int64
	var rssMu sync.Mutex
	runCtx, stopRun := context.WithTimeout(ctx, duration)
	defer stopRun()
	var runWG sync.WaitGroup
	runWG.Add(1)
	go func() {
		defer runWG.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			v, err := readRSS(pid)
			rssMu.Lock()
			if err != nil {
				rss = append(rss, -1) // the process is gone: a failure below
			} else {
				rss = append(rss, v)
			}
			rssMu.Unlock()
			select {
			case <-runCtx.Done():
				return
			case <-tick.C:
			}
		}
	}()

	// Readers: GETs of names that exist or come and go (NotFound is an answer, not an error),
	// LISTs of one namespace and of all, and the cluster-scoped resource.
	var reads, readErrors atomic.Int64
	var errMu sync.Mutex
	var errs []string
	record := func(format string, args ...any) {
		errMu.Lock()
		defer errMu.Unlock()
		if len(errs) < 50 {
			errs = append(errs, fmt.Sprintf(format, args...))
		}
	}
	names := []string{"gw", "r0", "r1", "r2", "r3", "b0", "b1", "absent"}
	for r := 0; r < loadReaders; r++ {
		runWG.Add(1)
		rr := rand.New(rand.NewSource(seed + int64(r) + 1))
		go func() {
			defer runWG.Done()
			for runCtx.Err() == nil {
				ns := namespaces[rr.Intn(len(namespaces))]
				var err error
				var what string
				switch rr.Intn(5) {
				case 0, 1:
					name := names[rr.Intn(len(names))]
					what = "get " + ns + "/" + name
					_, err = ep.EffectivePolicies(ns).Get(ctx, name, metav1.GetOptions{})
					if apierrors.IsNotFound(err) {
						err = nil
					}
				case 2:
					what = "list " + ns
					_, err = ep.EffectivePolicies(ns).List(ctx, metav1.ListOptions{})
				case 3:
					what = "list all namespaces"
					_, err = ep.EffectivePolicies("").List(ctx, metav1.ListOptions{})
				case 4:
					if rr.Intn(2) == 0 {
						what = "list clustereffectivepolicies"
						_, err = ep.ClusterEffectivePolicies().List(ctx, metav1.ListOptions{})
					} else {
						what = "get clustereffectivepolicy " + ns
						_, err = ep.ClusterEffectivePolicies().Get(ctx, ns, metav1.GetOptions{})
						if apierrors.IsNotFound(err) {
							err = nil
						}
					}
				}
				reads.Add(1)
				if err != nil {
					readErrors.Add(1)
					record("%s: %v", what, err)
				}
			}
		}()
	}

	// Churn: one goroutine creating, changing and deleting ColorPolicies at every level.
	churn := newLoadChurn(dyn, namespaces, rng)
	runWG.Add(1)
	go func() {
		defer runWG.Done()
		tick := time.NewTicker(loadChurnPeriod)
		defer tick.Stop()
		for {
			select {
			case <-runCtx.Done():
				return
			case <-tick.C:
			}
			if err := churn.step(ctx); err != nil {
				record("churn: %v", err)
			}
		}
	}()

	runWG.Wait()
	t.Logf("load: %d reads (%d failed), %d policy writes (%d creates, %d updates, %d deletes), %d policies at the end",
		reads.Load(), readErrors.Load(), churn.writes(), churn.creates, churn.updates, churn.deletes, len(churn.live))
	for _, e := range errs {
		t.Errorf("request error: %s", e)
	}

	checkLoadMemory(t, rss)

	// Settle: the LIST equals a recomputation from the inputs as the kube-apiserver has them.
	var final map[string]loadEntry
	eventually(t, 90*time.Second, "LIST equals a recomputation from the inputs", func() error {
		eps, err := ep.EffectivePolicies("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		ceps, err := ep.ClusterEffectivePolicies().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		want, err := recompute(ctx, dyn)
		if err != nil {
			return err
		}
		got := map[string]any{}
		final = map[string]loadEntry{}
		for i := range eps.Items {
			e, err := entryOf(&eps.Items[i])
			if err != nil {
				return err
			}
			k := compute.Key{Namespace: eps.Items[i].Namespace, Name: eps.Items[i].Name}.String()
			got[k] = e.content
			final[k] = e
		}
		for i := range ceps.Items {
			c, err := contentOf(ceps.Items[i].Targets)
			if err != nil {
				return err
			}
			got[ceps.Items[i].Name] = c
		}
		return diffContent(got, want)
	})

	// Every watcher's state equals the fresh LIST of its scope, resourceVersions included.
	for _, w := range watchers {
		want := map[string]loadEntry{}
		for k, e := range final {
			if w.namespace == "" || strings.HasPrefix(k, w.namespace+"/") {
				want[k] = e
			}
		}
		eventually(t, 30*time.Second, fmt.Sprintf("watcher %d (namespace %q) equals the LIST", w.id, w.namespace), func() error {
			return w.compare(want)
		})
	}
	cancel()
	wg.Wait()

	var events int
	for _, w := range watchers {
		events += w.events
		if w.events == 0 {
			// Every scope has policies churning in it; a silent watcher was not really watching.
			t.Errorf("watcher %d (namespace %q) received no event during the churn", w.id, w.namespace)
		}
		for _, p := range w.problems {
			t.Errorf("watcher %d (namespace %q): %s", w.id, w.namespace, p)
		}
	}
	t.Logf("load: %d watch events delivered in total (%.0f per watcher), %d objects at the end", events, float64(events)/loadWatchers, len(final))
}

// setUpLoadTopology creates, per namespace, a Gateway of one shared GatewayClass, four HTTPRoutes
// attached to it and two Services behind them:
//
//	GatewayClass e2e-load-gc > Gateway gw > HTTPRoute r0..r3 > Service b0 (r0, r1) / b1 (r2, r3)
func setUpLoadTopology(t *testing.T) []string {
	t.Helper()
	applyColorPolicyCRDs(t)
	kubectlApply(t, `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: e2e-load-gc}
spec: {controllerName: example.com/gateway-controller}
`)
	t.Cleanup(func() { _, _, _ = kubectlRaw(nil, "delete", "gatewayclass", "e2e-load-gc", "--ignore-not-found") })
	var namespaces []string
	for i := 0; i < loadNamespaces; i++ {
		ns := fmt.Sprintf("e2e-load-%d", i)
		namespaces = append(namespaces, ns)
		createNamespace(t, ns)
		var b strings.Builder
		fmt.Fprintf(&b, `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: %s}
spec:
  gatewayClassName: e2e-load-gc
  listeners: [{name: http, port: 80, protocol: HTTP}]
`, ns)
		for s := 0; s < 2; s++ {
			fmt.Fprintf(&b, `---
apiVersion: v1
kind: Service
metadata: {name: b%d, namespace: %s}
spec: {ports: [{name: http, port: 80}]}
`, s, ns)
		}
		for r := 0; r < 4; r++ {
			fmt.Fprintf(&b, `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r%d, namespace: %s}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: b%d, port: 80}]}]
`, r, ns, r/2)
		}
		kubectlApply(t, b.String())
	}
	return namespaces
}

// loadChurn owns the ColorPolicies of the test: a fixed set of slots (namespace × level × 2), each
// empty or holding one policy. It is used by one goroutine only.
type loadChurn struct {
	dyn                       dynamic.Interface
	slots                     []loadSlot
	live                      map[int]bool
	rng                       *rand.Rand
	creates, updates, deletes int
}

type loadSlot struct {
	namespace, name string
	target          map[string]any
}

func newLoadChurn(dyn dynamic.Interface, namespaces []string, rng *rand.Rand) *loadChurn {
	c := &loadChurn{dyn: dyn, live: map[int]bool{}, rng: rng}
	ref := func(group, kind, name string) map[string]any {
		return map[string]any{"group": group, "kind": kind, "name": name}
	}
	for _, ns := range namespaces {
		levels := []struct {
			name   string
			target map[string]any
		}{
			{"class", ref("gateway.networking.k8s.io", "GatewayClass", "e2e-load-gc")},
			{"ns", ref("", "Namespace", ns)},
			{"gw", ref("gateway.networking.k8s.io", "Gateway", "gw")},
			{"r0", ref("gateway.networking.k8s.io", "HTTPRoute", "r0")},
			{"r2", ref("gateway.networking.k8s.io", "HTTPRoute", "r2")},
			{"b1", ref("", "Service", "b1")},
		}
		for _, l := range levels {
			for i := 0; i < 2; i++ {
				c.slots = append(c.slots, loadSlot{namespace: ns, name: fmt.Sprintf("load-%s-%d", l.name, i), target: l.target})
			}
		}
	}
	return c
}

func (c *loadChurn) writes() int { return c.creates + c.updates + c.deletes }

// spec is a random ColorPolicy spec: a color as a default, or under overrides.
func (c *loadChurn) spec(s loadSlot) map[string]any {
	colors := []string{"red", "green", "blue", "yellow", "purple", "orange"}
	spec := map[string]any{"targetRefs": []any{s.target}}
	color := colors[c.rng.Intn(len(colors))]
	if c.rng.Intn(4) == 0 {
		spec["overrides"] = map[string]any{"color": color}
	} else {
		spec["color"] = color
		spec["weight"] = int64(c.rng.Intn(100))
	}
	return spec
}

func (c *loadChurn) step(ctx context.Context) error {
	i := c.rng.Intn(len(c.slots))
	s := c.slots[i]
	res := c.dyn.Resource(colorGVR).Namespace(s.namespace)
	switch {
	case !c.live[i]:
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "colors.example.com/v1", "kind": "ColorPolicy",
			"metadata": map[string]any{"name": s.name, "namespace": s.namespace},
			"spec":     c.spec(s),
		}}
		if _, err := res.Create(ctx, u, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create %s/%s: %w", s.namespace, s.name, err)
		}
		c.live[i] = true
		c.creates++
	case c.rng.Intn(2) == 0:
		// A JSON merge patch would merge the old and new stanzas; a JSON patch replaces spec whole.
		jp, _ := json.Marshal([]any{map[string]any{"op": "replace", "path": "/spec", "value": c.spec(s)}})
		if _, err := res.Patch(ctx, s.name, types.JSONPatchType, jp, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("update %s/%s: %w", s.namespace, s.name, err)
		}
		c.updates++
	default:
		if err := res.Delete(ctx, s.name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("delete %s/%s: %w", s.namespace, s.name, err)
		}
		delete(c.live, i)
		c.deletes++
	}
	return nil
}

// loadEntry is one object as a watcher or a LIST has it: its resourceVersion and its content
// (targets, as generic JSON, so that equal content compares equal whatever the key order).
type loadEntry struct {
	rv      uint64
	content any
}

func contentOf(targets []v1alpha1.Target) (any, error) {
	b, err := json.Marshal(targets)
	if err != nil {
		return nil, err
	}
	var v any
	err = json.Unmarshal(b, &v)
	return v, err
}

func entryOf(o *v1alpha1.EffectivePolicy) (loadEntry, error) {
	rv, err := strconv.ParseUint(o.ResourceVersion, 10, 64)
	if err != nil {
		return loadEntry{}, fmt.Errorf("%s/%s: resourceVersion %q: %v", o.Namespace, o.Name, o.ResourceVersion, err)
	}
	c, err := contentOf(o.Targets)
	return loadEntry{rv: rv, content: c}, err
}

// loadWatcher holds one watch's view of the EffectivePolicies of its scope ("" = all namespaces).
type loadWatcher struct {
	id        int
	namespace string

	mu       sync.Mutex
	state    map[string]loadEntry // "namespace/name" → entry
	objRV    map[string]uint64    // last resourceVersion seen per key, deleted keys included
	lastRV   uint64
	events   int
	problems []string
}

func (w *loadWatcher) problem(format string, args ...any) {
	if len(w.problems) < 20 {
		w.problems = append(w.problems, fmt.Sprintf(format, args...))
	}
}

// run lists, reports on started, then applies watch events until ctx ends. A watch that ends
// before that is a problem: the server or the kube-apiserver dropped it under load.
func (w *loadWatcher) run(ctx context.Context, ep epclient.EffectivepolicyV1alpha1Interface, started chan<- error) {
	c := ep.EffectivePolicies(w.namespace)
	list, err := c.List(ctx, metav1.ListOptions{})
	if err != nil {
		started <- fmt.Errorf("watcher %d: list: %w", w.id, err)
		return
	}
	w.mu.Lock()
	w.lastRV, err = strconv.ParseUint(list.ResourceVersion, 10, 64)
	if err != nil {
		w.mu.Unlock()
		started <- fmt.Errorf("watcher %d: list resourceVersion %q: %v", w.id, list.ResourceVersion, err)
		return
	}
	for i := range list.Items {
		e, err := entryOf(&list.Items[i])
		if err != nil {
			w.mu.Unlock()
			started <- err
			return
		}
		k := list.Items[i].Namespace + "/" + list.Items[i].Name
		w.state[k] = e
		w.objRV[k] = e.rv
	}
	w.mu.Unlock()
	timeout := int64(1800) // longer than any run: the watch must not end on its own
	wi, err := c.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, TimeoutSeconds: &timeout})
	if err != nil {
		started <- fmt.Errorf("watcher %d: watch: %w", w.id, err)
		return
	}
	defer wi.Stop()
	started <- nil
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-wi.ResultChan():
			if !ok {
				if ctx.Err() == nil {
					w.mu.Lock()
					w.problem("watch ended before the test did")
					w.mu.Unlock()
				}
				return
			}
			w.apply(ev)
		}
	}
}

// apply checks one event against the watcher's state and applies it. Every change gets its own
// resourceVersion, also inside one recompute batch (docs/storage.md), so they strictly increase
// across the watch and per object.
func (w *loadWatcher) apply(ev watch.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events++
	o, ok := ev.Object.(*v1alpha1.EffectivePolicy)
	if !ok {
		w.problem("%s event with %T: %v", ev.Type, ev.Object, ev.Object)
		return
	}
	k := o.Namespace + "/" + o.Name
	if w.namespace != "" && o.Namespace != w.namespace {
		w.problem("%s event for %s outside the watched namespace", ev.Type, k)
	}
	e, err := entryOf(o)
	if err != nil {
		w.problem("%s event: %v", ev.Type, err)
		return
	}
	if e.rv <= w.lastRV {
		w.problem("%s %s at resourceVersion %d after %d: resourceVersions did not increase", ev.Type, k, e.rv, w.lastRV)
	}
	w.lastRV = max(w.lastRV, e.rv)
	if prev, seen := w.objRV[k]; seen && e.rv <= prev {
		w.problem("%s %s at resourceVersion %d, already at %d: duplicated or reordered", ev.Type, k, e.rv, prev)
	}
	w.objRV[k] = e.rv
	_, exists := w.state[k]
	switch ev.Type {
	case watch.Added:
		if exists {
			w.problem("ADDED %s (resourceVersion %d) that the watcher already has", k, e.rv)
		}
		w.state[k] = e
	case watch.Modified:
		if !exists {
			w.problem("MODIFIED %s (resourceVersion %d) that the watcher does not have: ADDED missed", k, e.rv)
		}
		w.state[k] = e
	case watch.Deleted:
		if !exists {
			w.problem("DELETED %s (resourceVersion %d) that the watcher does not have", k, e.rv)
		}
		delete(w.state, k)
	default:
		w.problem("unexpected %s event: %v", ev.Type, ev.Object)
	}
}

func (w *loadWatcher) compare(want map[string]loadEntry) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var diffs []string
	for k, e := range want {
		got, ok := w.state[k]
		switch {
		case !ok:
			diffs = append(diffs, k+": missing")
		case got.rv != e.rv:
			diffs = append(diffs, fmt.Sprintf("%s: resourceVersion %d, LIST has %d", k, got.rv, e.rv))
		case !reflect.DeepEqual(got.content, e.content):
			diffs = append(diffs, k+": content differs from the LIST")
		}
	}
	for k := range w.state {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, k+": not in the LIST")
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		return fmt.Errorf("%d differences: %s", len(diffs), strings.Join(diffs, "; "))
	}
	return nil
}

// recompute reads every input the server reads back from the kube-apiserver (CRDs, Namespaces,
// Services, the Gateway API kinds and the policy kinds the CRDs declare) and computes every
// output with compute.ComputeAll, with the server's default options.
func recompute(ctx context.Context, dyn dynamic.Interface) (map[string]any, error) {
	list := func(gvr schema.GroupVersionResource, kind string) ([]*unstructured.Unstructured, error) {
		l, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", gvr, err)
		}
		out := make([]*unstructured.Unstructured, 0, len(l.Items))
		for i := range l.Items {
			u := &l.Items[i]
			if u.GetKind() == "" {
				u.SetGroupVersionKind(gvr.GroupVersion().WithKind(kind))
			}
			out = append(out, u)
		}
		return out, nil
	}
	crds, err := list(inputs.CRDResource, "CustomResourceDefinition")
	if err != nil {
		return nil, err
	}
	objs := append([]*unstructured.Unstructured{}, crds...)
	for _, r := range []struct {
		gvr  schema.GroupVersionResource
		kind string
	}{{inputs.NamespaceResource, "Namespace"}, {inputs.ServiceResource, "Service"}} {
		l, err := list(r.gvr, r.kind)
		if err != nil {
			return nil, err
		}
		objs = append(objs, l...)
	}
	// The resources to read, as the server's informers pick them (pkg/inputs).
	engine, err := compute.NewEngine(compute.Options{})
	if err != nil {
		return nil, err
	}
	gatewayKinds := map[string]bool{}
	for _, k := range inputs.GatewayAPIKinds {
		gatewayKinds[k] = true
	}
	resources := map[schema.GroupResource]schema.GroupVersionResource{}
	kinds := map[schema.GroupResource]string{}
	for _, crd := range crds {
		engine.Upsert(crd)
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
		plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
		gr := schema.GroupResource{Group: group, Resource: plural}
		kinds[gr] = kind
		if group == inputs.GatewayAPIGroup && gatewayKinds[kind] {
			if v := inputs.ServedVersion(crd); v != "" {
				resources[gr] = gr.WithVersion(v)
			}
		}
	}
	for _, gvr := range engine.PolicyResources() {
		resources[gvr.GroupResource()] = gvr
	}
	for gr, gvr := range resources {
		l, err := list(gvr, kinds[gr])
		if err != nil {
			return nil, err
		}
		objs = append(objs, l...)
	}
	outs, err := compute.ComputeAll(objs, compute.Options{})
	if err != nil {
		return nil, err
	}
	want := map[string]any{}
	for k, o := range outs {
		var targets []v1alpha1.Target
		switch o := o.(type) {
		case *v1alpha1.EffectivePolicy:
			targets = o.Targets
		case *v1alpha1.ClusterEffectivePolicy:
			targets = o.Targets
		default:
			return nil, fmt.Errorf("%s: ComputeAll returned %T", k, o)
		}
		c, err := contentOf(targets)
		if err != nil {
			return nil, err
		}
		want[k.String()] = c
	}
	return want, nil
}

func diffContent(got, want map[string]any) error {
	var diffs []string
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			diffs = append(diffs, k+": computed but not served")
		case !reflect.DeepEqual(g, w):
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			diffs = append(diffs, fmt.Sprintf("%s: served %s, computed %s", k, gb, wb))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, k+": served but not computed")
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		if len(diffs) > 10 {
			diffs = append(diffs[:10], fmt.Sprintf("... %d more", len(diffs)-10))
		}
		return fmt.Errorf("%s", strings.Join(diffs, "\n"))
	}
	return nil
}

// serverPID reads the pid hack/local-up.sh recorded for the server.
func serverPID(t *testing.T) int {
	t.Helper()
	pid := pidOf(t, "effectivepolicy-apiserver")
	if _, err := readRSS(pid); err != nil {
		t.Fatalf("server pid %d: %v", pid, err)
	}
	return pid
}

// readRSS returns VmRSS of pid in bytes.
func readRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" && f[2] == "kB" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// checkLoadMemory: the first third of the samples is warm-up (caches, connections, 200 watch
// streams, the store's history filling); the median of the last third may exceed the median of
// the middle third by loadRSSFactor plus loadRSSSlack. Medians of many samples smooth the saw
// tooth of the Go GC (the heap grows to about twice the live data before a collection, and the
// runtime returns freed pages lazily); a leak proportional to the work done grows the last third
// beyond it.
func checkLoadMemory(t *testing.T, samples []int64) {
	t.Helper()
	for _, s := range samples {
		if s < 0 {
			t.Fatalf("the server process disappeared during the load")
		}
	}
	if len(samples) < 9 {
		t.Fatalf("only %d memory samples; the run is too short to judge", len(samples))
	}
	n := len(samples) / 3
	median := func(s []int64) int64 {
		c := append([]int64(nil), s...)
		sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
		return c[len(c)/2]
	}
	warm, mid, end := median(samples[:n]), median(samples[n:2*n]), median(samples[2*n:])
	maxRSS := int64(0)
	for _, s := range samples {
		maxRSS = max(maxRSS, s)
	}
	const mib = 1 << 20
	limit := mid + int64(float64(mid)*loadRSSFactor) + loadRSSSlack
	t.Logf("load: server RSS median warm-up %d MiB, middle %d MiB, end %d MiB (limit %d MiB), max %d MiB, %d samples",
		warm/mib, mid/mib, end/mib, limit/mib, maxRSS/mib, len(samples))
	if end > limit {
		t.Errorf("server memory grew: median RSS %d MiB in the last third, %d MiB in the middle third (limit %d MiB)", end/mib, mid/mib, limit/mib)
	}
}

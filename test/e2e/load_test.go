//go:build e2e && long

package e2e

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	versioned "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned"
	epclient "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned/typed/effectivepolicy/v1alpha1"
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
	duration := loadDuration(t)
	seed := time.Now().UnixNano()
	t.Logf("load: %d watchers, %d readers, churn every %s for %s, seed %d", loadWatchers, loadReaders, loadChurnPeriod, duration, seed)
	rng := rand.New(rand.NewSource(seed))

	ep, dyn := loadClients(t)

	namespaces := setUpLoadTopology(t)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	watchers, wg, err := startLoadWatchers(ctx, ep, namespaces)
	if err != nil {
		cancel()
		wg.Wait()
		t.Fatalf("starting a watcher: %v", err)
	}
	t.Logf("load: %d watchers listed and watching", loadWatchers)

	// Memory samples of the server process during the whole run.
	pid := serverPID(t)
	rss := &rssSamples{}
	runCtx, stopRun := context.WithTimeout(ctx, duration)
	defer stopRun()
	var runWG sync.WaitGroup
	runWG.Add(1)
	go func() {
		defer runWG.Done()
		rss.sample(runCtx, pid)
	}()

	// Readers: GETs of names that exist or come and go (NotFound is an answer, not an error),
	// LISTs of one namespace and of all, and the cluster-scoped resource.
	var reads, readErrors atomic.Int64
	errs := &loadErrors{}
	for r := 0; r < loadReaders; r++ {
		runWG.Add(1)
		rr := rand.New(rand.NewSource(seed + int64(r) + 1))
		go func() {
			defer runWG.Done()
			runLoadReader(ctx, runCtx, ep, namespaces, rr, &reads, &readErrors, errs)
		}()
	}

	// Churn: one goroutine creating, changing and deleting ColorPolicies at every level.
	churn := newLoadChurn(dyn, namespaces, rng)
	runWG.Add(1)
	go func() {
		defer runWG.Done()
		runLoadChurn(ctx, runCtx, churn, errs)
	}()

	runWG.Wait()
	t.Logf("load: %d reads (%d failed), %d policy writes (%d creates, %d updates, %d deletes), %d policies at the end",
		reads.Load(), readErrors.Load(), churn.writes(), churn.creates, churn.updates, churn.deletes, len(churn.live))
	for _, e := range errs.errs {
		t.Errorf("request error: %s", e)
	}

	checkLoadMemory(t, rss.v)

	// Settle: the LIST equals a recomputation from the inputs as the kube-apiserver has them.
	var final map[string]loadEntry
	eventually(t, 90*time.Second, "LIST equals a recomputation from the inputs", listEqualsRecomputation(ctx, ep, dyn, &final))

	waitWatchersEqualList(t, watchers, final)
	cancel()
	wg.Wait()

	checkWatcherEvents(t, watchers, len(final))
}

// loadDuration is how long the load runs: 60s, or E2E_LOAD_DURATION.
func loadDuration(t *testing.T) time.Duration {
	t.Helper()
	duration := 60 * time.Second
	if s := os.Getenv("E2E_LOAD_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("E2E_LOAD_DURATION: %v", err)
		}
		duration = d
	}
	return duration
}

// loadClients are the clients of the load's EffectivePolicies and of its inputs.
func loadClients(t *testing.T) (epclient.EffectivepolicyV1alpha1Interface, dynamic.Interface) {
	t.Helper()
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
	return cs.EffectivepolicyV1alpha1(), dyn
}

// startLoadWatchers starts loadWatchers watchers, half across all namespaces and half in one
// namespace each, and waits until each has listed and watches from the list's resourceVersion,
// or one failed to start: then it returns that error and the watchers still run.
func startLoadWatchers(ctx context.Context, ep epclient.EffectivepolicyV1alpha1Interface, namespaces []string) ([]*loadWatcher, *sync.WaitGroup, error) {
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
			return watchers, &wg, err
		}
	}
	return watchers, &wg, nil
}

// rssSamples are the RSS samples of the server process, in bytes.
type rssSamples struct {
	mu sync.Mutex
	v  []int64
}

// sample appends the RSS of process pid every second until runCtx ends; -1 once the process is
// gone.
func (s *rssSamples) sample(runCtx context.Context, pid int) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		v, err := readRSS(pid)
		s.mu.Lock()
		if err != nil {
			s.v = append(s.v, -1) // the process is gone: a failure below
		} else {
			s.v = append(s.v, v)
		}
		s.mu.Unlock()
		select {
		case <-runCtx.Done():
			return
		case <-tick.C:
		}
	}
}

// loadErrors holds the first 50 errors of the load's requests, from any goroutine.
type loadErrors struct {
	mu   sync.Mutex
	errs []string
}

func (l *loadErrors) record(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.errs) < 50 {
		l.errs = append(l.errs, fmt.Sprintf(format, args...))
	}
}

// loadReadNames are the names the readers GET: those of the topology, which policies reach and
// leave, and one that never exists.
var loadReadNames = []string{"gw", "r0", "r1", "r2", "r3", "b0", "b1", "absent"}

// runLoadReader issues GETs and LISTs, picked by rr, back to back until runCtx ends, counting them
// and the failed ones.
func runLoadReader(ctx, runCtx context.Context, ep epclient.EffectivepolicyV1alpha1Interface, namespaces []string, rr *rand.Rand, reads, readErrors *atomic.Int64, errs *loadErrors) {
	for runCtx.Err() == nil {
		ns := namespaces[rr.Intn(len(namespaces))]
		var err error
		var what string
		switch rr.Intn(5) {
		case 0, 1:
			name := loadReadNames[rr.Intn(len(loadReadNames))]
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
			errs.record("%s: %v", what, err)
		}
	}
}

// runLoadChurn makes a churn step every loadChurnPeriod until runCtx ends.
func runLoadChurn(ctx, runCtx context.Context, churn *loadChurn, errs *loadErrors) {
	tick := time.NewTicker(loadChurnPeriod)
	defer tick.Stop()
	for {
		select {
		case <-runCtx.Done():
			return
		case <-tick.C:
		}
		if err := churn.step(ctx); err != nil {
			errs.record("churn: %v", err)
		}
	}
}

// listEqualsRecomputation is a check for eventually: the LISTs of EffectivePolicies and
// ClusterEffectivePolicies equal a recomputation from the inputs read back from the
// kube-apiserver. It leaves the EffectivePolicies listed in *final.
func listEqualsRecomputation(ctx context.Context, ep epclient.EffectivepolicyV1alpha1Interface, dyn dynamic.Interface, final *map[string]loadEntry) func() error {
	return func() error {
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
		*final = map[string]loadEntry{}
		for i := range eps.Items {
			e, err := entryOf(&eps.Items[i])
			if err != nil {
				return err
			}
			k := compute.Key{Namespace: eps.Items[i].Namespace, Name: eps.Items[i].Name}.String()
			got[k] = e.content
			(*final)[k] = e
		}
		for i := range ceps.Items {
			c, err := contentOf(ceps.Items[i].Targets)
			if err != nil {
				return err
			}
			got[ceps.Items[i].Name] = c
		}
		return diffContent(got, want)
	}
}

// waitWatchersEqualList waits until every watcher's state equals the fresh LIST of its scope,
// resourceVersions included.
func waitWatchersEqualList(t *testing.T, watchers []*loadWatcher, final map[string]loadEntry) {
	t.Helper()
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
}

// checkWatcherEvents checks, once the watchers have stopped, that each received events and saw
// no problem, and logs how many events they received.
func checkWatcherEvents(t *testing.T, watchers []*loadWatcher, finalObjects int) {
	t.Helper()
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
	t.Logf("load: %d watch events delivered in total (%.0f per watcher), %d objects at the end", events, float64(events)/loadWatchers, finalObjects)
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

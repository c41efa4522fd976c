//go:build e2e && long

package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	v1alpha1 "github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	versioned "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/informers/externalversions"
)

// TestLongKubeAPIServerRestart restarts the kube-apiserver under a running server and a client
// informer that reads EffectivePolicies through the aggregator. It proves that:
//   - our server survives it (same process) and its input informers recover: a policy changed and
//     a Service added after the restart show up in the answers;
//   - a client-go informer (the generated one, a reflector underneath) whose watch broke with the
//     kube-apiserver resumes or relists on its own and its store converges to the new answers;
//   - the server's effectivepolicy_informer_synced metrics are all 1 again.
func TestLongKubeAPIServerRestart(t *testing.T) {
	const ns = "e2e-fault-kas"
	faultFixture(t, ns, 3, "red")
	waitColors(t, ns, 3, "red")
	serverPID := pidOf(t, "effectivepolicy-apiserver")
	t.Cleanup(func() {
		// If the kube-apiserver did not come back, nothing else works: say so. Our server must
		// still be the same process (checked below); if not, restart it for the next test.
		if !serverRunning(t) {
			restoreServer(t)
		}
	})

	ctx, cancel := context.WithCancel(context.Background())
	inf := newEPInformer(t, ns)
	inf.factory.Start(ctx.Done())
	defer func() { cancel(); inf.factory.Shutdown() }()
	inf.waitSynced(ctx, t)
	eventually(t, 30*time.Second, "informer store before the restart", func() error { return inf.storeColors(3, "red") })

	// A plain watch from the list's resourceVersion, as a client that will resume after the break.
	cs := clientset(t, "")
	l0, err := cs.EffectivepolicyV1alpha1().EffectivePolicies(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w0, err := cs.EffectivepolicyV1alpha1().EffectivePolicies(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: l0.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w0.Stop()

	start := time.Now()
	localUp(t, "restart-kube-apiserver")
	t.Logf("kube-apiserver restarted in %s", time.Since(start).Round(time.Millisecond))

	// Changes made after the restart: only informers that re-established their watches on the
	// new kube-apiserver can see them.
	changeAfterRestart(t, ns, inf, start)

	// The plain watch broke with the kube-apiserver (the aggregator's proxied stream ends).
	waitWatchEnded(t, w0)
	// Resuming from the last resourceVersion the client knew must either replay what changed
	// (the server's history survived: same process, same epoch) or say 410 Gone (then the client
	// relists) -- never silently skip the changes.
	resumed := resumeWatch(ctx, t, cs, ns, l0.ResourceVersion)
	if resumed != nil {
		defer resumed.Stop()
		replayPostRestartChanges(t, resumed, l0)
	}

	if pid := pidOf(t, "effectivepolicy-apiserver"); pid != serverPID || !processAlive(pid) {
		t.Fatalf("our server did not survive the kube-apiserver restart: pid %d before, %d (alive %v) after", serverPID, pid, processAlive(pid))
	}
	port := serverPort(t, 0)
	eventually(t, 30*time.Second, "every input informer synced again", func() error {
		return inputInformersSynced(t, port)
	})
	code, body, err := serverHTTP(t, port, "/readyz")
	if err != nil || code != 200 {
		t.Fatalf("/readyz after the restart: %d %v %s", code, err, body)
	}
	inf.logWatchErrors(t)
}

// changeAfterRestart, once kubectl answers again, adds a Service to ns and
// recolors its policies, and waits for the server's answers and then the
// informer's store to show the change (logging how long after start each
// took).
func changeAfterRestart(t *testing.T, ns string, inf *epInformer, start time.Time) {
	t.Helper()
	eventually(t, 60*time.Second, "kubectl answers after the restart", func() error {
		_, errOut, err := kubectlRaw(nil, "get", "namespace", ns)
		if err != nil {
			return fmt.Errorf("%v: %s", err, errOut)
		}
		return nil
	})
	kubectlApply(t, `apiVersion: v1
kind: Service
metadata: {name: svc-3, namespace: `+ns+`}
spec: {ports: [{name: http, port: 80}]}
`)
	setColor(t, ns, 4, "blue")
	waitColors(t, ns, 4, "blue")
	t.Logf("server answers the post-restart state %s after the restart began", time.Since(start).Round(time.Millisecond))
	eventually(t, 90*time.Second, "the client informer's store to follow", func() error { return inf.storeColors(4, "blue") })
	t.Logf("client informer converged %s after the restart began", time.Since(start).Round(time.Millisecond))
}

// epInformer is a client informer of the EffectivePolicies of one
// namespace, with the errors of its watches.
type epInformer struct {
	factory  externalversions.SharedInformerFactory
	informer cache.SharedIndexInformer

	mu          sync.Mutex
	watchErrors []string
}

// newEPInformer makes the informer of namespace ns (not started).
func newEPInformer(t *testing.T, ns string) *epInformer {
	t.Helper()
	inf := &epInformer{}
	inf.factory = externalversions.NewSharedInformerFactoryWithOptions(clientset(t, ""), 0, externalversions.WithNamespace(ns))
	inf.informer = inf.factory.Effectivepolicy().V1alpha1().EffectivePolicies().Informer()
	if err := inf.informer.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
		inf.mu.Lock()
		inf.watchErrors = append(inf.watchErrors, err.Error())
		inf.mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	return inf
}

// waitSynced waits up to 60s for the started informer's first list.
func (inf *epInformer) waitSynced(ctx context.Context, t *testing.T) {
	t.Helper()
	syncCtx, syncCancel := context.WithTimeout(ctx, 60*time.Second)
	defer syncCancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.informer.HasSynced) {
		t.Fatal("informer did not sync")
	}
}

// storeColors checks the informer's store as checkColorItems does.
func (inf *epInformer) storeColors(n int, color string) error {
	var items []v1alpha1.EffectivePolicy
	for _, o := range inf.informer.GetStore().List() {
		items = append(items, *o.(*v1alpha1.EffectivePolicy))
	}
	return checkColorItems(items, n, color)
}

func (inf *epInformer) logWatchErrors(t *testing.T) {
	inf.mu.Lock()
	t.Logf("client informer watch errors during the restart (each followed by a re-list or re-watch): %d %q", len(inf.watchErrors), inf.watchErrors)
	inf.mu.Unlock()
}

// waitWatchEnded drains w until it closes, failing if it is still open 30s
// on.
func waitWatchEnded(t *testing.T, w watch.Interface) {
	t.Helper()
	select {
	case _, ok := <-w.ResultChan():
		for ok {
			_, ok = <-w.ResultChan()
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the watch opened before the kube-apiserver restart is still open 30s after it")
	}
}

// resumeWatch watches the EffectivePolicies of ns from resourceVersion rv:
// the watch, or nil if the server said 410 Gone (then a client relists).
func resumeWatch(ctx context.Context, t *testing.T, cs *versioned.Clientset, ns, rv string) watch.Interface {
	t.Helper()
	resumed, err := cs.EffectivepolicyV1alpha1().EffectivePolicies(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		if !apierrors.IsGone(err) && !apierrors.IsResourceExpired(err) {
			t.Fatalf("re-watch from %s: want events or 410 Gone, got %v", rv, err)
		}
		t.Logf("re-watch from %s: 410 Gone (client relists)", rv)
		return nil
	}
	return resumed
}

// replayPostRestartChanges applies the events of the resumed watch to the
// list l0 until it shows the post-restart state (4 outputs, blue), or the
// watch says 410 Gone as an event.
func replayPostRestartChanges(t *testing.T, resumed watch.Interface, l0 *v1alpha1.EffectivePolicyList) {
	t.Helper()
	latest := map[string]*v1alpha1.EffectivePolicy{}
	for _, ep := range l0.Items {
		latest[ep.Name] = ep.DeepCopy()
	}
	deadline := time.After(60 * time.Second)
	for checkColorItems(mapItems(latest), 4, "blue") != nil {
		select {
		case e, ok := <-resumed.ResultChan():
			if !ok {
				t.Fatalf("resumed watch closed before replaying the changes; state %v", checkColorItems(mapItems(latest), 4, "blue"))
			}
			switch o := e.Object.(type) {
			case *v1alpha1.EffectivePolicy:
				if e.Type == watch.Deleted {
					delete(latest, o.Name)
				} else {
					latest[o.Name] = o
				}
			case *metav1.Status:
				if err := apierrors.FromObject(o); !apierrors.IsGone(err) && !apierrors.IsResourceExpired(err) {
					t.Fatalf("resumed watch: %v", err)
				}
				t.Logf("re-watch from %s: 410 Gone as an event (client relists)", l0.ResourceVersion)
				latest = nil
			}
		case <-deadline:
			t.Fatalf("resumed watch from %s did not replay the changes: %v", l0.ResourceVersion, checkColorItems(mapItems(latest), 4, "blue"))
		}
		if latest == nil {
			break
		}
	}
	if latest != nil {
		t.Logf("re-watch from %s resumed and replayed the post-restart changes", l0.ResourceVersion)
	}
}

// inputInformersSynced: the server's metrics on port say each of its input
// informers is synced.
func inputInformersSynced(t *testing.T, port string) error {
	code, body, err := serverHTTP(t, port, "/metrics")
	if err != nil || code != 200 {
		return fmt.Errorf("/metrics: %d %v", code, err)
	}
	for _, r := range []string{"customresourcedefinitions.apiextensions.k8s.io", "namespaces", "services", "colorpolicies.colors.example.com"} {
		if v := metricValue(body, `effectivepolicy_informer_synced{resource="`+r+`"}`); v != 1 {
			return fmt.Errorf("effectivepolicy_informer_synced{resource=%q} = %v", r, v)
		}
	}
	return nil
}

func mapItems(m map[string]*v1alpha1.EffectivePolicy) []v1alpha1.EffectivePolicy {
	var out []v1alpha1.EffectivePolicy
	for _, ep := range m {
		out = append(out, *ep)
	}
	return out
}

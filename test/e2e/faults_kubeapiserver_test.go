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
	factory := externalversions.NewSharedInformerFactoryWithOptions(clientset(t, ""), 0, externalversions.WithNamespace(ns))
	informer := factory.Effectivepolicy().V1alpha1().EffectivePolicies()
	var mu sync.Mutex
	var watchErrors []string
	if err := informer.Informer().SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
		mu.Lock()
		watchErrors = append(watchErrors, err.Error())
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	defer func() { cancel(); factory.Shutdown() }()
	syncCtx, syncCancel := context.WithTimeout(ctx, 60*time.Second)
	defer syncCancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), informer.Informer().HasSynced) {
		t.Fatal("informer did not sync")
	}
	storeColors := func(n int, color string) error {
		var items []v1alpha1.EffectivePolicy
		for _, o := range informer.Informer().GetStore().List() {
			items = append(items, *o.(*v1alpha1.EffectivePolicy))
		}
		return checkColorItems(items, n, color)
	}
	eventually(t, 30*time.Second, "informer store before the restart", func() error { return storeColors(3, "red") })

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
	eventually(t, 90*time.Second, "the client informer's store to follow", func() error { return storeColors(4, "blue") })
	t.Logf("client informer converged %s after the restart began", time.Since(start).Round(time.Millisecond))

	// The plain watch broke with the kube-apiserver (the aggregator's proxied stream ends).
	select {
	case _, ok := <-w0.ResultChan():
		for ok {
			_, ok = <-w0.ResultChan()
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the watch opened before the kube-apiserver restart is still open 30s after it")
	}
	// Resuming from the last resourceVersion the client knew must either replay what changed
	// (the server's history survived: same process, same epoch) or say 410 Gone (then the client
	// relists) -- never silently skip the changes.
	resumed, err := cs.EffectivepolicyV1alpha1().EffectivePolicies(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: l0.ResourceVersion})
	if err != nil {
		if !apierrors.IsGone(err) && !apierrors.IsResourceExpired(err) {
			t.Fatalf("re-watch from %s: want events or 410 Gone, got %v", l0.ResourceVersion, err)
		}
		t.Logf("re-watch from %s: 410 Gone (client relists)", l0.ResourceVersion)
	} else {
		defer resumed.Stop()
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

	if pid := pidOf(t, "effectivepolicy-apiserver"); pid != serverPID || !processAlive(pid) {
		t.Fatalf("our server did not survive the kube-apiserver restart: pid %d before, %d (alive %v) after", serverPID, pid, processAlive(pid))
	}
	port := serverPort(t, 0)
	eventually(t, 30*time.Second, "every input informer synced again", func() error {
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
	})
	code, body, err := serverHTTP(t, port, "/readyz")
	if err != nil || code != 200 {
		t.Fatalf("/readyz after the restart: %d %v %s", code, err, body)
	}
	mu.Lock()
	t.Logf("client informer watch errors during the restart (each followed by a re-list or re-watch): %d %q", len(watchErrors), watchErrors)
	mu.Unlock()
}

func mapItems(m map[string]*v1alpha1.EffectivePolicy) []v1alpha1.EffectivePolicy {
	var out []v1alpha1.EffectivePolicy
	for _, ep := range m {
		out = append(out, *ep)
	}
	return out
}

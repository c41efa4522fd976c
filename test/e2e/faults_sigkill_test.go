//go:build e2e && long

package e2e

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	v1alpha1 "github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// TestLongServerSIGKILL kills our server with SIGKILL (no shutdown code runs: bbolt is not
// closed) and starts it again on the same cache directory. It proves that:
//   - the bbolt cache is reused: the log says it restored exactly as many outputs as the server
//     listed before the kill, and effectivepolicy_cache_discarded_total stays 0;
//   - resourceVersions never go backwards: the list resourceVersion after the restart is >= the
//     one before, in the same epoch, and every object that existed keeps a resourceVersion >=
//     its old one (equal, as nothing changed);
//   - a watch from the pre-kill list resourceVersion resumes on the new process (no 410) and
//     delivers a change made after the restart;
//   - the answers are correct before and after.
func TestLongServerSIGKILL(t *testing.T) {
	const ns = "e2e-fault-kill"
	faultFixture(t, ns, 5, "green")
	waitColors(t, ns, 5, "green")
	t.Cleanup(func() {
		if !serverRunning(t) {
			restoreServer(t)
		}
	})

	cs := clientset(t, "")
	ctx := context.Background()
	before, err := cs.EffectivepolicyV1alpha1().EffectivePolicies("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	clBefore, err := cs.EffectivepolicyV1alpha1().ClusterEffectivePolicies().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oldPID := pidOf(t, "effectivepolicy-apiserver")

	start := time.Now()
	localUp(t, "kill-server")
	if processAlive(oldPID) {
		t.Fatalf("server pid %d still alive after kill-server", oldPID)
	}
	localUp(t, "start-server")
	t.Logf("killed and answering again through the aggregator in %s", time.Since(start).Round(time.Millisecond))

	checkRestoredFromCache(t, len(before.Items), len(clBefore.Items))

	waitColors(t, ns, 5, "green")
	after, err := cs.EffectivepolicyV1alpha1().EffectivePolicies("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	clAfter, err := cs.EffectivepolicyV1alpha1().ClusterEffectivePolicies().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkListsKeptAcrossKill(t, before, after, clBefore, clAfter)

	// A client watching from before the kill resumes on the new process.
	wctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	w, err := cs.EffectivepolicyV1alpha1().EffectivePolicies(ns).Watch(wctx, metav1.ListOptions{ResourceVersion: before.ResourceVersion})
	if err != nil {
		t.Fatalf("watch from the pre-kill resourceVersion %s: %v", before.ResourceVersion, err)
	}
	defer w.Stop()
	setColor(t, ns, 5, "yellow")
	awaitPostRestartEvents(wctx, t, w, before.ResourceVersion)
	waitColors(t, ns, 5, "yellow")
}

// checkRestoredFromCache: the restarted server restored from its cache as
// many EffectivePolicies and ClusterEffectivePolicies as were listed before
// the kill (at least 5 of the former), and discarded nothing.
func checkRestoredFromCache(t *testing.T, nBefore, clBefore int) {
	t.Helper()
	restored := restoredObjects(t)
	if got, want := restored["effectivepolicies"], nBefore; got != want || want < 5 {
		t.Fatalf("restored %d effectivepolicies from the cache, listed %d before the kill (log: %v)", got, want, restored)
	}
	if got, want := restored["clustereffectivepolicies"], clBefore; got != want {
		t.Fatalf("restored %d clustereffectivepolicies from the cache, listed %d before the kill", got, want)
	}
	if v, err := serverMetric(t, serverPort(t, 0), "effectivepolicy_cache_discarded_total"); err != nil || v != 0 {
		t.Fatalf("effectivepolicy_cache_discarded_total = %v (%v), want 0: the cache was not reused", v, err)
	}
	t.Logf("restored %v outputs from the cache", restored)
}

// checkListsKeptAcrossKill: the lists after the restart keep the epoch of
// those before, their resourceVersions do not go backwards, and every
// EffectivePolicy is still there with its uid.
func checkListsKeptAcrossKill(t *testing.T, before, after *v1alpha1.EffectivePolicyList, clBefore, clAfter *v1alpha1.ClusterEffectivePolicyList) {
	t.Helper()
	for _, c := range []struct{ what, before, after string }{
		{"effectivepolicies", before.ResourceVersion, after.ResourceVersion},
		{"clustereffectivepolicies", clBefore.ResourceVersion, clAfter.ResourceVersion},
	} {
		if epochOf(c.after) != epochOf(c.before) {
			t.Fatalf("%s: epoch changed across the kill (%s -> %s): the cache's history was not kept", c.what, c.before, c.after)
		}
		if rvNumber(t, c.after) < rvNumber(t, c.before) {
			t.Fatalf("%s: list resourceVersion went backwards: %s -> %s", c.what, c.before, c.after)
		}
	}
	afterByName := map[string]v1alpha1.EffectivePolicy{}
	for _, ep := range after.Items {
		afterByName[ep.Namespace+"/"+ep.Name] = ep
	}
	for _, b := range before.Items {
		a, ok := afterByName[b.Namespace+"/"+b.Name]
		if !ok {
			t.Fatalf("%s/%s missing after the restart", b.Namespace, b.Name)
		}
		if rvNumber(t, a.ResourceVersion) < rvNumber(t, b.ResourceVersion) {
			t.Fatalf("%s/%s: resourceVersion went backwards: %s -> %s", b.Namespace, b.Name, b.ResourceVersion, a.ResourceVersion)
		}
		if a.UID != b.UID {
			t.Fatalf("%s/%s: uid changed across the kill: %s -> %s", b.Namespace, b.Name, b.UID, a.UID)
		}
	}
}

// awaitPostRestartEvents reads w, watching since beforeRV, until it has seen
// the post-restart change (yellow) of each of the 5 EffectivePolicies as a
// MODIFIED event and nothing else.
func awaitPostRestartEvents(wctx context.Context, t *testing.T, w watch.Interface, beforeRV string) {
	t.Helper()
	seen := map[string]bool{}
	for len(seen) < 5 {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch from %s ended; saw %v", beforeRV, seen)
			}
			ep, isEP := e.Object.(*v1alpha1.EffectivePolicy)
			if !isEP {
				t.Fatalf("watch from the pre-kill resourceVersion %s: %s %#v", beforeRV, e.Type, e.Object)
			}
			if e.Type != watch.Modified {
				t.Fatalf("unexpected %s of %s", e.Type, ep.Name)
			}
			if rvNumber(t, ep.ResourceVersion) <= rvNumber(t, beforeRV) {
				t.Fatalf("event resourceVersion %s not after %s", ep.ResourceVersion, beforeRV)
			}
			// Nothing else changed in the namespace since before the kill.
			if len(ep.Targets) != 1 || len(ep.Targets[0].Policies) != 1 ||
				string(ep.Targets[0].Policies[0].Effective[0].Spec.Raw) != `{"color":"yellow"}` {
				t.Fatalf("event for %s is not the post-restart change: %+v", ep.Name, ep.Targets)
			}
			seen[ep.Name] = true
		case <-wctx.Done():
			t.Fatalf("no MODIFIED events for the post-restart change; saw %v", seen)
		}
	}
}

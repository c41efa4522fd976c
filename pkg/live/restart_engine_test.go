package live

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

// TestRealEngineRestartIsSilent: with the real engine, a server restarted
// from its cache on unchanged inputs recomputes every output and applies
// none of them: the outputs as computed (shared, uncopied engine objects)
// compare equal to the ones decoded from the cache, so no MODIFIED event and
// no new resourceVersion. Each scenario's policies on the common topology.
func TestRealEngineRestartIsSilent(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(scenarioDir, "*", "policies.yaml"))
	if len(dirs) == 0 {
		t.Fatalf("no scenarios under %s", scenarioDir)
	}
	base := parseDocs(t, filepath.Join(scenarioDir, "crds", "colorpolicies.yaml"))
	base = append(base, parseDocs(t, filepath.Join(scenarioDir, "topology.yaml"))...)
	for _, p := range dirs {
		t.Run(filepath.Base(filepath.Dir(p)), func(t *testing.T) {
			all := append(append(append([]*unstructured.Unstructured{}, gatewayCRDs...), base...), parseDocs(t, p)...)
			client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), scenarioListKinds())
			for _, o := range all {
				gvr := o.GroupVersionKind().GroupVersion().WithResource(plurals[o.GetKind()])
				if err := client.Tracker().Create(gvr, noisy(o), o.GetNamespace()); err != nil {
					t.Fatal(err)
				}
			}
			dir := t.TempDir()
			run := func() *Live {
				o := NewOptions()
				o.CacheDir = dir
				o.RecomputeDebounce = time.Millisecond
				l, err := o.NewForClient(client)
				if err != nil {
					t.Fatal(err)
				}
				if err := l.CacheError(); err != nil {
					t.Fatal(err)
				}
				return l
			}
			l1 := run()
			h1 := &harness{t: t, live: l1}
			h1.start()
			rv1, crv1 := l1.stores.namespaced.ResourceVersion(), l1.stores.cluster.ResourceVersion()
			if len(snapshotKeys(l1.stores.namespaced))+len(snapshotKeys(l1.stores.cluster)) == 0 {
				t.Fatal("the scenario serves nothing")
			}
			h1.stop()

			l2 := run()
			w, err := l2.EffectivePolicies().Watch(context.Background(), "", l2.stores.namespaced.ResourceVersion())
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			h2 := &harness{t: t, live: l2}
			h2.start()
			if rv, crv := l2.stores.namespaced.ResourceVersion(), l2.stores.cluster.ResourceVersion(); rv != rv1 || crv != crv1 {
				t.Fatalf("resourceVersions after the restart %d, %d; want %d, %d (something was re-applied)", rv, crv, rv1, crv1)
			}
			select {
			case e := <-w.ResultChan():
				t.Fatalf("event after the restart: %v", describe(e))
			default:
			}
		})
	}
}

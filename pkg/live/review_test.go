package live

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// TestReviewTouchesNothing: a review (docs/spec.md §10) answers from the engine and
// leaves the served state alone: no watch event on any resource, no
// resourceVersion moves, no cache write. A real edit afterwards is served as
// usual (the review swallowed nothing).
func TestReviewTouchesNothing(t *testing.T) {
	objs := append(append([]*unstructured.Unstructured{}, gatewayCRDs...), parseDocs(t, filepath.Join(scenarioDir, "crds", "colorpolicies.yaml"))...)
	objs = append(objs, parseDocs(t, filepath.Join(scenarioDir, "topology.yaml"))...)
	objs = append(objs, colorPolicy("gw", "g1", nil))
	l, client := runRealEngine(t, objs, func(u *unstructured.Unstructured) *unstructured.Unstructured { return u })
	ctx := context.Background()
	if _, _, err := l.PolicyReaches().List(ctx, ""); err != nil { // reaches built
		t.Fatal(err)
	}
	var watches []watch.Interface
	var rvs []uint64
	for _, b := range []*Backend{l.EffectivePolicies(), l.ClusterEffectivePolicies(), l.PolicyReaches(), l.ClusterPolicyReaches()} {
		_, rv, err := b.List(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		w, err := b.Watch(ctx, "", rv)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		watches, rvs = append(watches, w), append(rvs, rv)
	}
	cacheFile := cacheFileOf(t, l)
	statBefore, err := os.Stat(cacheFile)
	if err != nil {
		t.Fatal(err)
	}

	blue := colorPolicy("gw", "g1", nil)
	blue.Object["spec"].(map[string]interface{})["color"] = "blue"
	outs, err := l.Answers().Review(ctx, compute.Proposal{Apply: []*unstructured.Unstructured{blue}})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) == 0 {
		t.Fatal("the review found nothing the change would alter")
	}
	for _, w := range watches {
		none(t, w, 300*time.Millisecond)
	}
	for i, b := range []*Backend{l.EffectivePolicies(), l.ClusterEffectivePolicies(), l.PolicyReaches(), l.ClusterPolicyReaches()} {
		if _, rv, _ := b.List(ctx, ""); rv != rvs[i] {
			t.Errorf("resource %d: resourceVersion %d -> %d after a review", i, rvs[i], rv)
		}
	}
	if st, err := os.Stat(cacheFile); err != nil || !st.ModTime().Equal(statBefore.ModTime()) || st.Size() != statBefore.Size() {
		t.Errorf("the cache file was written by a review (%v)", err)
	}

	// A real edit still arrives.
	gvr := schema.GroupVersionResource{Group: "colors.example.com", Version: "v1", Resource: "colorpolicies"}
	if _, err := client.Resource(gvr).Namespace("colors").Update(ctx, blue, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-watches[0].ResultChan():
		if e.Type != watch.Modified {
			t.Errorf("after a real edit: %v", e.Type)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a real edit after the review gave no watch event")
	}
}

// cacheFileOf is the live layer's bbolt file.
func cacheFileOf(t *testing.T, l *Live) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(l.cache.dir, "*"))
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && !st.IsDir() {
			return f
		}
	}
	t.Fatalf("no cache file in %s", l.cache.dir)
	return ""
}

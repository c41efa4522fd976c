package integration

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	informers "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/informers/externalversions"
)

// nextEvent reads one event or fails after a timeout.
func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case e, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event in 10s")
	}
	return watch.Event{}
}

func describe(e watch.Event) string {
	if p, ok := e.Object.(*v1alpha1.EffectivePolicy); ok {
		return fmt.Sprintf("%s %s/%s", e.Type, p.Namespace, p.Name)
	}
	return fmt.Sprintf("%s %T", e.Type, e.Object)
}

func TestWatchResume(t *testing.T) {
	ctx := ctxFor(t)
	cs := newClient(t)
	epStore.Apply([]change{ep("resume", "a", nil, target("HTTPRoute", "a"))})
	list, err := cs.EffectivepolicyV1alpha1().EffectivePolicies("resume").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Changes after the list, some in another namespace.
	epStore.Apply([]change{ep("resume", "a", nil, target("Gateway", "a")), ep("resume", "b", nil)})
	epStore.Apply([]change{ep("resume-other", "x", nil)})
	rvDel, _ := epStore.Apply([]change{del("resume", "a")})

	w, err := cs.EffectivepolicyV1alpha1().EffectivePolicies("resume").Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	want := []string{"MODIFIED resume/a", "ADDED resume/b", "DELETED resume/a"}
	for i, wantEv := range want {
		e := nextEvent(t, w)
		if describe(e) != wantEv {
			t.Fatalf("event %d: got %s, want %s", i, describe(e), wantEv)
		}
		if i == 2 && e.Object.(*v1alpha1.EffectivePolicy).ResourceVersion != strconv.FormatUint(rvDel, 10) {
			t.Errorf("deletion carries rv %s, want %d", e.Object.(*v1alpha1.EffectivePolicy).ResourceVersion, rvDel)
		}
	}
	// A live change arrives too.
	epStore.Apply([]change{ep("resume", "c", nil)})
	if got := describe(nextEvent(t, w)); got != "ADDED resume/c" {
		t.Fatalf("got %s", got)
	}
}

func TestWatchGone(t *testing.T) {
	ctx := ctxFor(t)
	cs := newClient(t)
	epStore.Apply([]change{ep("gone", "a", nil)})
	old := epStore.ResourceVersion()
	for i := 0; i <= historySize; i++ {
		epStore.Apply([]change{ep("gone", "a", map[string]string{"i": strconv.Itoa(i)})})
	}
	for _, tc := range []struct {
		name string
		rv   uint64
	}{
		{"too old", old},
		{"from the future", epStore.ResourceVersion() + 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := cs.EffectivepolicyV1alpha1().EffectivePolicies("gone").Watch(ctx, metav1.ListOptions{ResourceVersion: strconv.FormatUint(tc.rv, 10)})
			if err == nil {
				// Errors may also arrive as an event, depending on the client.
				e := nextEvent(t, w)
				w.Stop()
				err = apierrors.FromObject(e.Object)
			}
			if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
				t.Fatalf("want 410 Gone, got %v", err)
			}
		})
	}
}

func TestWatchInitialEvents(t *testing.T) {
	ctx := ctxFor(t)
	cs := newClient(t)
	epStore.Apply([]change{
		ep("initial", "a", map[string]string{"app": "x"}),
		ep("initial", "b", map[string]string{"app": "y"}),
	})
	yes := true
	for _, tc := range []struct {
		name string
		opts metav1.ListOptions
		want []string
	}{
		{"watch-list", metav1.ListOptions{SendInitialEvents: &yes, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true},
			[]string{"ADDED initial/a", "ADDED initial/b", "BOOKMARK"}},
		{"watch-list with selector", metav1.ListOptions{SendInitialEvents: &yes, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true, LabelSelector: "app=y"},
			[]string{"ADDED initial/b", "BOOKMARK"}},
		{"legacy rv=0", metav1.ListOptions{ResourceVersion: "0"},
			[]string{"ADDED initial/a", "ADDED initial/b"}},
		{"legacy no rv, field selector", metav1.ListOptions{FieldSelector: "metadata.name=a"},
			[]string{"ADDED initial/a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := cs.EffectivepolicyV1alpha1().EffectivePolicies("initial").Watch(ctx, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			for _, want := range tc.want {
				e := nextEvent(t, w)
				if want == "BOOKMARK" {
					p, ok := e.Object.(*v1alpha1.EffectivePolicy)
					if e.Type != watch.Bookmark || !ok || p.Annotations[metav1.InitialEventsAnnotationKey] != "true" || p.ResourceVersion == "" {
						t.Fatalf("want the initial-events-end bookmark, got %s %+v", e.Type, e.Object)
					}
					continue
				}
				if describe(e) != want {
					t.Fatalf("got %s, want %s", describe(e), want)
				}
			}
		})
	}
}

func TestWatchLabelTransitions(t *testing.T) {
	ctx := ctxFor(t)
	cs := newClient(t)
	epStore.Apply([]change{ep("labels", "a", map[string]string{"app": "x"})})
	w, err := cs.EffectivepolicyV1alpha1().EffectivePolicies("labels").Watch(ctx, metav1.ListOptions{LabelSelector: "app=x"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	steps := []struct {
		change change
		want   string
	}{
		{ep("labels", "b", map[string]string{"app": "y"}), ""}, // invisible
		{ep("labels", "a", map[string]string{"app": "y"}), "DELETED labels/a"},
		{ep("labels", "b", map[string]string{"app": "x"}), "ADDED labels/b"},
		{ep("labels", "b", map[string]string{"app": "x", "v": "2"}), "MODIFIED labels/b"},
		{del("labels", "a"), ""}, // was already gone for this watcher
		{del("labels", "b"), "DELETED labels/b"},
	}
	if got := describe(nextEvent(t, w)); got != "ADDED labels/a" {
		t.Fatalf("initial event: %s", got)
	}
	for _, s := range steps {
		epStore.Apply([]change{s.change})
		if s.want == "" {
			continue
		}
		if got := describe(nextEvent(t, w)); got != s.want {
			t.Fatalf("got %s, want %s", got, s.want)
		}
	}
}

func TestInformer(t *testing.T) {
	for _, watchList := range []bool{false, true} {
		t.Run(fmt.Sprintf("WatchListClient=%v", watchList), func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, watchList)
			ns := fmt.Sprintf("informer-%v", watchList)
			epStore.Apply([]change{ep(ns, "a", nil), ep(ns, "b", nil)})

			ctx, cancel := context.WithCancel(ctxFor(t))
			takeRequests()
			factory := informers.NewSharedInformerFactoryWithOptions(newClient(t), 0, informers.WithNamespace(ns))
			inf := factory.Effectivepolicy().V1alpha1().EffectivePolicies()
			events := make(chan string, 100)
			_, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
				AddFunc:    func(o any) { events <- "add " + o.(*v1alpha1.EffectivePolicy).Name },
				UpdateFunc: func(_, o any) { events <- "update " + o.(*v1alpha1.EffectivePolicy).Name },
				DeleteFunc: func(o any) {
					if p, ok := o.(*v1alpha1.EffectivePolicy); ok {
						events <- "delete " + p.Name
					}
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			factory.Start(ctx.Done())
			defer func() { cancel(); factory.Shutdown() }()
			for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
				if !ok {
					t.Fatalf("%v did not sync", typ)
				}
			}
			got, err := inf.Lister().EffectivePolicies(ns).List(everything())
			if err != nil || len(got) != 2 {
				t.Fatalf("lister: %v %v", got, err)
			}

			// The informer used the protocol the feature gate asks for.
			var sawWatchList, sawList bool
			for _, r := range takeRequests() {
				if !strings.Contains(r, "/namespaces/"+ns+"/effectivepolicies") {
					continue
				}
				if strings.Contains(r, "sendInitialEvents=true") {
					sawWatchList = true
				} else if !strings.Contains(r, "watch=true") {
					sawList = true
				}
			}
			if sawWatchList != watchList || sawList == watchList {
				t.Errorf("watch-list request %v, list request %v; want watch-list %v", sawWatchList, sawList, watchList)
			}

			epStore.Apply([]change{ep(ns, "a", map[string]string{"x": "y"}), del(ns, "b"), ep(ns, "c", nil)})
			want := map[string]bool{"add a": true, "add b": true, "update a": true, "delete b": true, "add c": true}
			deadline := time.After(10 * time.Second)
			for len(want) > 0 {
				select {
				case e := <-events:
					delete(want, e)
				case <-deadline:
					t.Fatalf("missing informer events %v", want)
				}
			}
		})
	}
}

func everything() labels.Selector { return labels.Everything() }

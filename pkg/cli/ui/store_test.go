package ui

import (
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// TestStoreListedOnce: graph requests and Live streams asked while the
// list is under way wait for it, and none lists again once it is done:
// one list of each scope and one watch of each, however many ask.
func TestStoreListedOnce(t *testing.T) {
	cases := []struct {
		name    string
		graphs  int
		streams int
	}{
		{name: "graphs", graphs: 5},
		{name: "streams", streams: 3},
		{name: "both", graphs: 4, streams: 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := newWatchSource(t)
			gate := make(chan struct{})
			src.gate = gate
			s := newTestServer(t, src, "")
			serve(t, s)
			host := s.listener.Addr().String()

			var wg sync.WaitGroup
			codes := make([]int, tc.graphs)
			for i := range tc.graphs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					q := url.Values{}
					if i%2 == 1 {
						q.Set("gateway", demoGatewayID)
					}
					codes[i], _ = get(t, s, "/api/graph", q)
				}()
			}
			streams := make([]<-chan sseEvent, tc.streams)
			var open sync.WaitGroup
			for i := range tc.streams {
				open.Add(1)
				go func() {
					defer open.Done()
					_, streams[i] = openLive(t, s, host, s.token)
				}()
			}
			close(gate)
			wg.Wait()
			open.Wait()
			for i, code := range codes {
				if code != http.StatusOK {
					t.Errorf("graph %d: status %d", i, code)
				}
			}
			for _, events := range streams {
				if n := nextGraph(t, events)[demoRouteID]; n.Outcome != "partial" {
					t.Errorf("a stream's first graph: route %+v", n)
				}
			}
			src.watchPair(t)
			src.noCall(t)
			if lists, _ := src.listed(); lists != 2 {
				t.Errorf("%d lists, want 2 (the namespaced and the cluster-scoped, once)", lists)
			}
		})
	}
}

// TestStoreChangeReachesEveryStream: one watch's event reaches every
// stream and the next graph request.
func TestStoreChangeReachesEveryStream(t *testing.T) {
	src := newWatchSource(t)
	s := newTestServer(t, src, "")
	serve(t, s)
	host := s.listener.Addr().String()
	var streams []<-chan sseEvent
	for range 3 {
		_, events := openLive(t, s, host, s.token)
		nextGraph(t, events)
		streams = append(streams, events)
	}
	ns, _ := src.watchPair(t)
	ns.w.Modify(conflicted(routeEP(t, src.demoSource)))
	for i, events := range streams {
		if n := nextGraph(t, events)[demoRouteID]; n.Outcome != "conflict" {
			t.Errorf("stream %d: route %+v, want conflict", i, n)
		}
	}
	code, body := get(t, s, "/api/graph", nil)
	if code != http.StatusOK || !hasNode(body, demoRouteID, "conflict") {
		t.Errorf("graph after the change: %d, route not conflicted: %v", code, body["summary"])
	}
	src.noCall(t)
	if lists, _ := src.listed(); lists != 2 {
		t.Errorf("%d lists, want 2", lists)
	}
}

// hasNode is whether the graph body has the node id with the outcome.
func hasNode(body map[string]any, id, outcome string) bool {
	nodes, _ := body["nodes"].([]any)
	for _, n := range nodes {
		m, _ := n.(map[string]any)
		if m["id"] == id && m["outcome"] == outcome {
			return true
		}
	}
	return false
}

// TestStoreRefused: what the user may not list behaves as when each
// request listed itself: a refused cluster-scoped list leaves the
// namespaced one (watched alone), a refused namespaced list is each
// request's 403, listed again by the next.
func TestStoreRefused(t *testing.T) {
	cases := []struct {
		name          string
		namespace     string
		forbidCluster bool
		fail          error
		want          int
		// wantLists: the refused namespaced list is listed again by each request (3 graphs, a stream).
		wantLists   int
		wantWatches []bool
	}{
		{name: "cluster-scoped refused", namespace: "baker", forbidCluster: true, want: http.StatusOK, wantLists: 2, wantWatches: []bool{false}},
		{name: "namespaced refused", fail: apierrors.NewForbidden(v1alpha1.Resource("effectivepolicies"), "", nil), want: http.StatusForbidden, wantLists: 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := newWatchSource(t)
			src.forbidCluster = tc.forbidCluster
			src.setFail(tc.fail)
			s := newTestServer(t, src, tc.namespace)
			for range 3 {
				if code, _ := get(t, s, "/api/graph", nil); code != tc.want {
					t.Errorf("status %d, want %d", code, tc.want)
				}
			}
			if tc.want == http.StatusOK {
				// A stream of what was listed (it lists nothing more).
				serve(t, s)
				_, events := openLive(t, s, s.listener.Addr().String(), s.token)
				if n := nextGraph(t, events)[demoRouteID]; n.Outcome != "partial" {
					t.Errorf("live: route %+v", n)
				}
			} else if code, _ := get(t, s, "/api/live", nil); code != tc.want {
				t.Errorf("live: status %d, want %d", code, tc.want)
			}
			if lists, _ := src.listed(); lists != tc.wantLists {
				t.Errorf("%d lists, want %d", lists, tc.wantLists)
			}
			for _, cluster := range tc.wantWatches {
				if c := src.nextCall(t); c.cluster != cluster || c.namespace != tc.namespace {
					t.Errorf("watch %+v, want cluster %v in %q", c, cluster, tc.namespace)
				}
			}
			src.noCall(t)
		})
	}
}

// TestStoreWatchEnds: a watch that ends in an error, or closes at once
// with nothing seen, is followed by a relist of that scope and a watch from
// the relist's resourceVersion; a watch that closes after an event (a
// bookmark too) is watched again from that event's resourceVersion, with
// no relist (kube-apiserver closes every watch after a while, and a list
// takes seconds at scale). Either way the streams go on: the new watch's
// events reach them.
func TestStoreWatchEnds(t *testing.T) {
	cases := []struct {
		name string
		// end ends the watch w of src's namespaced list.
		end func(t *testing.T, src *watchSource, w *watch.FakeWatcher)
		// wantLists counts the lists (2 at the start); wantRV is the new
		// watch's resourceVersion, "" for the relist's.
		wantLists int
		wantRV    string
	}{
		{name: "closed at once", end: func(_ *testing.T, _ *watchSource, w *watch.FakeWatcher) { w.Stop() }, wantLists: 3},
		{name: "410", end: func(_ *testing.T, _ *watchSource, w *watch.FakeWatcher) {
			w.Error(&apierrors.NewResourceExpired("too old resource version").ErrStatus)
		}, wantLists: 3},
		{name: "closed after a bookmark", end: func(_ *testing.T, _ *watchSource, w *watch.FakeWatcher) {
			b := &v1alpha1.EffectivePolicy{}
			b.ResourceVersion = "77"
			w.Action(watch.Bookmark, b)
			w.Stop()
		}, wantLists: 2, wantRV: "77"},
		{name: "closed after an edit", end: func(t *testing.T, src *watchSource, w *watch.FakeWatcher) {
			edit := routeEP(t, src.demoSource)
			edit.Annotations = map[string]string{"edited": "yes"}
			edit.ResourceVersion = "78"
			w.Modify(edit)
			w.Stop()
		}, wantLists: 2, wantRV: "78"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := newWatchSource(t)
			s := newTestServer(t, src, "")
			serve(t, s)
			_, events := openLive(t, s, s.listener.Addr().String(), s.token)
			nextGraph(t, events)
			ns, _ := src.watchPair(t)
			tc.end(t, src, ns.w)
			again := src.nextCall(t)
			lists, rv := src.listed()
			if tc.wantRV != "" {
				rv = tc.wantRV
			}
			if again.cluster || again.resourceVersion != rv || lists != tc.wantLists {
				t.Errorf("after the end: %d lists, watch %+v, want %d and the namespaced watch from %s", lists, again, tc.wantLists, rv)
			}
			again.w.Modify(conflicted(routeEP(t, src.demoSource)))
			if n := nextGraph(t, events)[demoRouteID]; n.Outcome != "conflict" {
				t.Errorf("the new watch's edit: route %+v, want conflict", n)
			}
			src.noCall(t)
		})
	}
}

// TestStoreReaches: the Policy view's list reads the server's one list
// and watch of the PolicyReaches: listed once (each scope) however many
// ask, a watch's event in the next answer.
func TestStoreReaches(t *testing.T) {
	src := newWatchSource(t)
	s := newTestServer(t, src, "")
	serve(t, s)
	const gone = "TimeoutPolicy baker/baker-timeouts"
	for range 3 {
		if code, body := get(t, s, "/api/reaches", nil); code != http.StatusOK || !hasPolicy(body, gone) {
			t.Fatalf("reaches: %d %v, want %q among them", code, body, gone)
		}
	}
	var ns watchCall
	for range 2 {
		select {
		case c := <-src.reachCalls:
			if !c.cluster {
				ns = c
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the server watches no PolicyReaches")
		}
	}
	if ns.w == nil {
		t.Fatal("no watch of the namespaced PolicyReaches")
	}
	src.mu.Lock()
	lists := src.reachLists
	src.mu.Unlock()
	if lists != 2 {
		t.Errorf("%d lists of PolicyReaches, want 2 (each scope once)", lists)
	}
	pr, err := src.PolicyReach(t.Context(), "baker", "baker-timeouts")
	if err != nil {
		t.Fatal(err)
	}
	ns.w.Delete(pr)
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := get(t, s, "/api/reaches", nil)
		if code == http.StatusOK && !hasPolicy(body, gone) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the delete: %d %v, want %q gone", code, body, gone)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// hasPolicy is whether the /api/reaches body lists a policy labeled label.
func hasPolicy(body map[string]any, label string) bool {
	ps, _ := body["policies"].([]any)
	for _, p := range ps {
		if m, _ := p.(map[string]any); m["label"] == label {
			return true
		}
	}
	return false
}

// heldListServer is a served page whose first list is held until gate
// closes, telling its progress as listed of total meanwhile.
func heldListServer(t *testing.T, listed, total int64) (s *Server, gate chan struct{}) {
	t.Helper()
	src := newWatchSource(t)
	gate = make(chan struct{})
	src.gate, src.progress = gate, []int64{listed, total}
	s = newTestServer(t, src, "")
	serve(t, s)
	return s, gate
}

// TestStoreListing: while the first list is under way, /api/listing says
// how far it is, as its pages tell it; once the list is done, and
// offline, it says nothing.
func TestStoreListing(t *testing.T) {
	s, gate := heldListServer(t, 5000, 40403)
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body := get(t, s, "/api/listing", nil)
		if code != http.StatusOK {
			t.Fatalf("listing: status %d", code)
		}
		if body["listed"] == float64(5000) && body["total"] == float64(40403) {
			break
		}
		if time.Now().After(deadline) {
			close(gate)
			t.Fatalf("listing under way: %v, want listed 5000 of 40403", body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(gate)
	if code, _ := get(t, s, "/api/graph", nil); code != http.StatusOK {
		t.Fatalf("graph: status %d", code)
	}
	if _, body := get(t, s, "/api/listing", nil); len(body) != 0 {
		t.Errorf("listing after the list: %v, want {}", body)
	}

	offline := newTestServer(t, newDemoSource(t), "")
	if code, body := get(t, offline, "/api/listing", nil); code != http.StatusOK || len(body) != 0 {
		t.Errorf("listing offline: status %d, %v, want {}", code, body)
	}
}

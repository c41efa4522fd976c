package ui

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// watchCall is one watch the server started.
type watchCall struct {
	namespace       string
	cluster         bool
	resourceVersion string
	w               *watch.FakeWatcher
}

// watchSource is the demo's source that can be watched: each watch is a
// fake the test drives, and each list has a resourceVersion.
type watchSource struct {
	*demoSource
	calls chan watchCall
}

func newWatchSource(t *testing.T) *watchSource {
	return &watchSource{demoSource: newDemoSource(t), calls: make(chan watchCall, 16)}
}

func (s *watchSource) EffectivePolicies(ctx context.Context, ns string, cluster bool) (runtime.Object, error) {
	l, err := s.demoSource.EffectivePolicies(ctx, ns, cluster)
	if err == nil {
		la, _ := meta.ListAccessor(l)
		la.SetResourceVersion(map[bool]string{false: "41", true: "42"}[cluster])
	}
	return l, err
}

func (s *watchSource) WatchEffectivePolicies(_ context.Context, ns string, cluster bool, rv string) (watch.Interface, error) {
	w := watch.NewFakeWithChanSize(4, false)
	s.calls <- watchCall{namespace: ns, cluster: cluster, resourceVersion: rv, w: w}
	return w, nil
}

// nextCall is the next watch the server started.
func (s *watchSource) nextCall(t *testing.T) watchCall {
	t.Helper()
	select {
	case c := <-s.calls:
		return c
	case <-time.After(30 * time.Second):
		t.Fatal("the server started no watch")
		return watchCall{}
	}
}

// sseEvent is one Server-Sent Event.
type sseEvent struct {
	name string
	data string
}

// serve runs the server until the test ends.
func serve(t *testing.T, s *Server) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
}

// openLive asks for /api/live as the page does (host, token) and returns
// the status and, on 200, the stream's events (closed when it ends).
func openLive(t *testing.T, s *Server, host, token string) (int, <-chan sseEvent) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+s.listener.Addr().String()+"/api/live", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	if token != "" {
		req.Header.Set(TokenHeader, token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan sseEvent, 16)
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		close(events)
		return res.StatusCode, events
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	t.Cleanup(func() { res.Body.Close() })
	go readEvents(res.Body, events)
	return res.StatusCode, events
}

func readEvents(body io.Reader, events chan<- sseEvent) {
	defer close(events)
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 1<<24)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.name != "" {
				events <- ev
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.data = strings.TrimPrefix(line, "data: ")
		}
	}
}

// next is the stream's next event; ok is false when the stream ended.
func next(t *testing.T, events <-chan sseEvent) (sseEvent, bool) {
	t.Helper()
	select {
	case ev, ok := <-events:
		return ev, ok
	case <-time.After(30 * time.Second):
		t.Fatal("no event")
		return sseEvent{}, false
	}
}

// nextGraph is the next event, which must be a graph.
func nextGraph(t *testing.T, events <-chan sseEvent) map[string]Node {
	t.Helper()
	ev, ok := next(t, events)
	if !ok || ev.name != "graph" {
		t.Fatalf("want a graph event, got %+v (open %v)", ev, ok)
	}
	var g Graph
	if err := json.Unmarshal([]byte(ev.data), &g); err != nil {
		t.Fatal(err)
	}
	nodes := map[string]Node{}
	for _, n := range g.Nodes {
		nodes[n.ID] = n
	}
	return nodes
}

// routeEP is the demo route's EffectivePolicy, as listed.
func routeEP(t *testing.T, src Source) *v1alpha1.EffectivePolicy {
	t.Helper()
	l, err := src.EffectivePolicies(context.Background(), "baker", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range l.(*v1alpha1.EffectivePolicyList).Items {
		for _, tg := range ep.Targets {
			if tg.Kind == "HTTPRoute" && ep.Name == "baker" {
				return ep.DeepCopy()
			}
		}
	}
	t.Fatal("no EffectivePolicy of the route baker/baker")
	return nil
}

// TestLiveGuard: the stream is guarded as every /api/ endpoint, and the
// offline source has none.
func TestLiveGuard(t *testing.T) {
	online := newTestServer(t, newWatchSource(t), "")
	offline := newTestServer(t, newDemoSource(t), "")
	serve(t, online)
	serve(t, offline)
	cases := []struct {
		name  string
		s     *Server
		host  string
		token string
		want  int
	}{
		{name: "no token", s: online, host: online.listener.Addr().String(), want: http.StatusUnauthorized},
		{name: "wrong token", s: online, host: online.listener.Addr().String(), token: "nope", want: http.StatusUnauthorized},
		{name: "rebound name", s: online, host: "attacker.example:" + portOf(online), token: online.token, want: http.StatusForbidden},
		{name: "offline", s: offline, host: offline.listener.Addr().String(), token: offline.token, want: http.StatusNotImplemented},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if code, _ := openLive(t, tc.s, tc.host, tc.token); code != tc.want {
				t.Errorf("status %d, want %d", code, tc.want)
			}
		})
	}
}

func portOf(s *Server) string {
	_, port, _ := strings.Cut(s.listener.Addr().String(), ":")
	return port
}

// TestLiveEvents: the stream starts with the graph, watches each list from
// its resourceVersion, sends a changed graph after each change (and
// nothing for an event that changes nothing drawn), and ends when a watch
// ends; the page's next connection gets the graph as it is then.
func TestLiveEvents(t *testing.T) {
	src := newWatchSource(t)
	s := newTestServer(t, src, "")
	serve(t, s)
	host := s.listener.Addr().String()

	_, events := openLive(t, s, host, s.token)
	if n := nextGraph(t, events)[demoRouteID]; n.Outcome != "partial" {
		t.Fatalf("first graph's route: %+v", n)
	}
	ns, cl := src.nextCall(t), src.nextCall(t)
	if ns.cluster || ns.resourceVersion != "41" || !cl.cluster || cl.resourceVersion != "42" {
		t.Errorf("watches: %+v %+v, want the namespaced from 41 and the cluster-scoped from 42", ns, cl)
	}

	same := routeEP(t, src)
	conflicted := routeEP(t, src)
	for i := range conflicted.Targets {
		for j := range conflicted.Targets[i].Policies {
			for k := range conflicted.Targets[i].Policies[j].Sources {
				conflicted.Targets[i].Policies[j].Sources[k].Outcome = v1alpha1.OutcomeConflicted
			}
		}
	}
	steps := []struct {
		name string
		do   func()
		want func(map[string]Node) error
	}{
		{name: "edit", do: func() { ns.w.Modify(same); ns.w.Modify(conflicted) }, want: func(g map[string]Node) error {
			// The unchanged Modify sent nothing: the first graph after it is the conflict.
			if n := g[demoRouteID]; n.Outcome != "conflict" {
				return fmt.Errorf("route %+v, want conflict", n)
			}
			return nil
		}},
		{name: "delete", do: func() { ns.w.Delete(conflicted) }, want: func(g map[string]Node) error {
			if n, ok := g[demoRouteID]; ok && n.Target {
				return fmt.Errorf("route still a target: %+v", n)
			}
			return nil
		}},
	}
	for _, st := range steps {
		st.do()
		if err := st.want(nextGraph(t, events)); err != nil {
			t.Errorf("%s: %v", st.name, err)
		}
	}

	// The watch expires: the stream says why and ends.
	cl.w.Error(&apierrors.NewResourceExpired("too old resource version: 42").ErrStatus)
	if ev, ok := next(t, events); !ok || ev.name != "end" || !strings.Contains(ev.data, "too old resource version") {
		t.Errorf("want an end event, got %+v (open %v)", ev, ok)
	}
	if ev, ok := next(t, events); ok {
		t.Errorf("the stream goes on after its end: %+v", ev)
	}

	// The page connects again: the current graph (the source's, since the fakes changed nothing in it).
	_, again := openLive(t, s, host, s.token)
	if n := nextGraph(t, again)[demoRouteID]; n.Outcome != "partial" {
		t.Errorf("graph after reconnecting: route %+v", n)
	}
	ns2 := src.nextCall(t)
	src.nextCall(t)
	ns2.w.Stop()
	if ev, ok := next(t, again); !ok || ev.name != "end" || !strings.Contains(ev.data, "the watch ended") {
		t.Errorf("a watch closed: want an end event, got %+v (open %v)", ev, ok)
	}
}

const demoRouteID = "gateway.networking.k8s.io/HTTPRoute/baker/baker"

package ui

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/pagedlist"
)

// watchCall is one watch the server started.
type watchCall struct {
	namespace       string
	cluster         bool
	resourceVersion string
	w               *watch.FakeWatcher
}

// watchSource is the demo's source that can be watched: each watch is a
// fake the test drives, each list has a resourceVersion (41, 42, ... in
// the order listed), and the test may make the lists fail or gate them.
type watchSource struct {
	*demoSource
	calls chan watchCall
	// reachCalls are the watches of PolicyReaches (apart, so that calls
	// holds the EffectivePolicies' only).
	reachCalls chan watchCall

	mu sync.Mutex
	// lists counts the lists; rvs are the resourceVersions they answered.
	// reachLists counts the PolicyReaches' lists.
	lists      int
	reachLists int
	rvs        []string
	// fail is the lists' error while set.
	fail error
	// gate, while set, holds each list until it is closed.
	gate chan struct{}
	// progress, when set, is told to the list's pagedlist.Progress before
	// the gate (listed, total), as a paged list tells its pages.
	progress []int64
}

func newWatchSource(t *testing.T) *watchSource {
	return &watchSource{demoSource: newDemoSource(t), calls: make(chan watchCall, 64), reachCalls: make(chan watchCall, 64)}
}

func (s *watchSource) PolicyReaches(ctx context.Context, ns string, cluster bool) (runtime.Object, error) {
	s.mu.Lock()
	s.reachLists++
	s.mu.Unlock()
	return s.demoSource.PolicyReaches(ctx, ns, cluster)
}

func (s *watchSource) WatchPolicyReaches(_ context.Context, ns string, cluster bool, rv string) (watch.Interface, error) {
	w := watch.NewFakeWithChanSize(4, false)
	s.reachCalls <- watchCall{namespace: ns, cluster: cluster, resourceVersion: rv, w: w}
	return w, nil
}

func (s *watchSource) EffectivePolicies(ctx context.Context, ns string, cluster bool) (runtime.Object, error) {
	s.mu.Lock()
	gate, progress := s.gate, s.progress
	s.mu.Unlock()
	if p := pagedlist.ProgressFrom(ctx); p != nil && progress != nil && !cluster {
		p(progress[0], progress[1])
	}
	if gate != nil {
		<-gate
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lists++
	if s.fail != nil {
		return nil, s.fail
	}
	l, err := s.demoSource.EffectivePolicies(ctx, ns, cluster)
	if err == nil {
		la, _ := meta.ListAccessor(l)
		rv := strconv.Itoa(40 + len(s.rvs) + 1)
		la.SetResourceVersion(rv)
		s.rvs = append(s.rvs, rv)
	}
	return l, err
}

func (s *watchSource) setFail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = err
}

// listed is the number of lists so far and the resourceVersion of the last.
func (s *watchSource) listed() (int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.rvs) == 0 {
		return s.lists, ""
	}
	return s.lists, s.rvs[len(s.rvs)-1]
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

// watchPair is the next two watches the server started (concurrently):
// the namespaced one and the cluster-scoped one.
func (s *watchSource) watchPair(t *testing.T) (ns, cl watchCall) {
	t.Helper()
	ns, cl = s.nextCall(t), s.nextCall(t)
	if ns.cluster {
		ns, cl = cl, ns
	}
	return ns, cl
}

// noCall fails if the server started a watch by the time a request
// answered (the watches start before the first request is answered).
func (s *watchSource) noCall(t *testing.T) {
	t.Helper()
	select {
	case c := <-s.calls:
		t.Errorf("a watch more: %+v", c)
	default:
	}
}

// sseEvent is one Server-Sent Event.
type sseEvent struct {
	name string
	data string
	id   string
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
	return openLiveQuery(t, s, host, token, nil)
}

// openLiveQuery is openLive with the query q.
func openLiveQuery(t *testing.T, s *Server, host, token string, q url.Values) (int, <-chan sseEvent) {
	t.Helper()
	target := "http://" + s.listener.Addr().String() + "/api/live"
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	req, err := http.NewRequest(http.MethodGet, target, nil)
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
		case strings.HasPrefix(line, "id: "):
			ev.id = strings.TrimPrefix(line, "id: ")
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

// conflicted is ep with every source Conflicted.
func conflicted(ep *v1alpha1.EffectivePolicy) *v1alpha1.EffectivePolicy {
	ep = ep.DeepCopy()
	for i := range ep.Targets {
		for j := range ep.Targets[i].Policies {
			for k := range ep.Targets[i].Policies[j].Sources {
				ep.Targets[i].Policies[j].Sources[k].Outcome = v1alpha1.OutcomeConflicted
			}
		}
	}
	return ep
}

// TestLiveEvents: the stream starts with the graph, the server watches
// each list from its resourceVersion, a changed graph follows each change
// (and nothing an event that changes nothing drawn); a watch that ends
// in an error such as 410, or closed at once with nothing seen, is
// followed by a relist and a new watch from the relist's
// resourceVersion, the stream going on; a relist
// that fails ends the stream with the reason, and the next request lists
// again.
func TestLiveEvents(t *testing.T) {
	src := newWatchSource(t)
	s := newTestServer(t, src, "")
	serve(t, s)
	host := s.listener.Addr().String()

	_, events := openLive(t, s, host, s.token)
	if n := nextGraph(t, events)[demoRouteID]; n.Outcome != "partial" {
		t.Fatalf("first graph's route: %+v", n)
	}
	ns, cl := src.watchPair(t)
	if ns.cluster || ns.resourceVersion != "41" || !cl.cluster || cl.resourceVersion != "42" {
		t.Errorf("watches: %+v %+v, want the namespaced from 41 and the cluster-scoped from 42", ns, cl)
	}

	same := routeEP(t, src.demoSource)
	bad := conflicted(same)
	ns.w.Modify(same)
	ns.w.Modify(bad)
	// The unchanged Modify sent nothing: the first graph after it is the conflict.
	if n := nextGraph(t, events)[demoRouteID]; n.Outcome != "conflict" {
		t.Errorf("edit: route %+v, want conflict", n)
	}
	ns.w.Delete(bad)
	if n, ok := nextGraph(t, events)[demoRouteID]; ok && n.Target {
		t.Errorf("delete: route still a target: %+v", n)
	}

	// The watch expires: the server lists the namespaced list again (the
	// source has the route) and watches from there; the stream goes on.
	ns.w.Error(&apierrors.NewResourceExpired("too old resource version: 41").ErrStatus)
	if n := nextGraph(t, events)[demoRouteID]; n.Outcome != "partial" {
		t.Errorf("after the relist: route %+v, want partial", n)
	}
	ns2 := src.nextCall(t)
	if lists, rv := src.listed(); lists != 3 || ns2.cluster || ns2.resourceVersion != rv {
		t.Errorf("after a 410: %d lists, watch %+v, want 3 lists and the namespaced watch from %s", lists, ns2, rv)
	}

	// A watch closed at once, nothing seen: relisted and watched again, nothing sent (nothing changed).
	cl.w.Stop()
	cl2 := src.nextCall(t)
	if lists, rv := src.listed(); lists != 4 || !cl2.cluster || cl2.resourceVersion != rv {
		t.Errorf("after a close: %d lists, watch %+v, want 4 lists and the cluster-scoped watch from %s", lists, cl2, rv)
	}
	ns2.w.Modify(bad)
	if n := nextGraph(t, events)[demoRouteID]; n.Outcome != "conflict" {
		t.Errorf("the new watch's edit: route %+v, want conflict", n)
	}

	// The relist fails (the user lost the right): the stream ends with the reason.
	src.setFail(apierrors.NewForbidden(v1alpha1.Resource("effectivepolicies"), "", nil))
	ns2.w.Error(&apierrors.NewResourceExpired("too old resource version").ErrStatus)
	if ev, ok := next(t, events); !ok || ev.name != "end" || !strings.Contains(ev.data, "forbidden") {
		t.Errorf("a failed relist: want an end event, got %+v (open %v)", ev, ok)
	}
	if ev, ok := next(t, events); ok {
		t.Errorf("the stream goes on after its end: %+v", ev)
	}
	// The next request lists again: the API's refusal, then, allowed again, the graph.
	if code, _ := get(t, s, "/api/graph", nil); code != http.StatusForbidden {
		t.Errorf("graph while refused: %d, want 403", code)
	}
	src.setFail(nil)
	_, again := openLive(t, s, host, s.token)
	if n := nextGraph(t, again)[demoRouteID]; n.Outcome != "partial" {
		t.Errorf("graph after reconnecting: route %+v", n)
	}
}

const demoRouteID = "gateway.networking.k8s.io/HTTPRoute/baker/baker"

// graphTagOf asks /api/graph as the page does and answers the tag of the
// graph (its header).
func graphTagOf(t *testing.T, s *Server, q url.Values) string {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, "http://"+s.listener.Addr().String()+"/api/graph?"+q.Encode(), nil)
	r.Header.Set(TokenHeader, s.token)
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Fatalf("graph: %d %s", w.Code, w.Body.String())
	}
	tag := w.Header().Get(GraphTagHeader)
	if tag == "" {
		t.Fatal("the graph has no tag")
	}
	return tag
}

// TestLiveUnchanged: a page that sends the tag of the graph it drew gets
// "unchanged" for a first graph that is the same, and the graph (with its
// tag as the event's id) when it is another: another focus, another tag,
// or a change since.
func TestLiveUnchanged(t *testing.T) {
	src := newWatchSource(t)
	s := newTestServer(t, src, "")
	serve(t, s)
	host := s.listener.Addr().String()
	whole := graphTagOf(t, s, url.Values{})
	focused := graphTagOf(t, s, url.Values{"gateway": {demoGatewayID}})
	if whole == focused {
		t.Fatalf("the whole graph and the focused one have the same tag %s", whole)
	}
	cases := []struct {
		name  string
		query url.Values
		want  string
	}{
		{name: "drawn", query: url.Values{"drawn": {whole}}, want: "unchanged"},
		{name: "drawn, focused", query: url.Values{"drawn": {focused}, "gateway": {demoGatewayID}}, want: "unchanged"},
		{name: "no tag", query: url.Values{}, want: "graph"},
		{name: "another graph's tag", query: url.Values{"drawn": {focused}}, want: "graph"},
		{name: "an unknown tag", query: url.Values{"drawn": {"0123"}}, want: "graph"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, events := openLiveQuery(t, s, host, s.token, tc.query)
			ev, ok := next(t, events)
			if !ok || ev.name != tc.want {
				t.Fatalf("first event %+v (open %v), want %s", ev, ok, tc.want)
			}
			if ev.name == "graph" && ev.id != graphTag([]byte(ev.data)) {
				t.Errorf("graph event's id %q, want its tag", ev.id)
			}
		})
	}
	// After a change (seen on a stream open before it, so the store has it),
	// the tag drawn before it is another graph's.
	_, watching := openLive(t, s, host, s.token)
	nextGraph(t, watching)
	ns, _ := src.watchPair(t)
	ns.w.Modify(conflicted(routeEP(t, src.demoSource)))
	if n := nextGraph(t, watching)[demoRouteID]; n.Outcome != "conflict" {
		t.Fatalf("the change: route %+v", n)
	}
	_, events := openLiveQuery(t, s, host, s.token, url.Values{"drawn": {whole}})
	if n := nextGraph(t, events)[demoRouteID]; n.Outcome != "conflict" {
		t.Errorf("after a change: route %+v, want the changed graph", n)
	}
}

package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/render"
)

// Watcher is a Source that can follow changes: the cluster's API, watched
// with the user's own credentials (so a watch shows what `kubectl get -w`
// would show them). The manifests of --offline do not change, so the
// offline source is no Watcher and the page has no Live view there.
type Watcher interface {
	// WatchEffectivePolicies watches as EffectivePolicies lists, from
	// resourceVersion (that of the list).
	WatchEffectivePolicies(ctx context.Context, namespace string, cluster bool, resourceVersion string) (watch.Interface, error)
}

const (
	// liveSettle gathers the events of one change: a policy edit changes
	// many targets at once, and the page should redraw once.
	liveSettle = 250 * time.Millisecond
	// liveHeartbeat is how often an idle stream sends a comment, so that a
	// page gone away is noticed (the write fails) and its watches end.
	liveHeartbeat = 20 * time.Second
)

// liveStream is one page's live connection: the EffectivePolicies as the
// watches left them, and the watches' events merged.
type liveStream struct {
	// focus is the Gateway the page draws (graphFor), "" for its choice.
	focus   string
	items   map[string]runtime.Object
	events  chan watch.Event
	ended   chan error
	watches []watch.Interface
}

// live streams the graph to the page as Server-Sent Events: "graph" with
// the whole graph when the stream starts and after each change, "end" (with
// the reason) when a watch ends, after which the page connects again and
// gets the current graph. The token guards it as every /api/ endpoint; the
// page reads it with fetch, which sends the token header (EventSource
// cannot).
func (s *Server) live(w http.ResponseWriter, r *http.Request) {
	wt, ok := s.opts.Source.(Watcher)
	if !ok {
		writeError(w, http.StatusNotImplemented, "no live updates offline: the page shows the manifests as they were read")
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "this connection cannot stream")
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	ls, err := s.startLive(ctx, wt)
	if err != nil {
		answer(w, nil, err)
		return
	}
	defer ls.stop()
	ls.focus = r.URL.Query().Get("gateway")
	first, err := ls.graph()
	if err != nil {
		answer(w, nil, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	ls.follow(ctx, &sseWriter{w: w, fl: fl}, first)
}

// startLive lists the page's EffectivePolicies (as /api/graph does) and
// watches each list from its resourceVersion, so that no change falls
// between the list and the watch.
func (s *Server) startLive(ctx context.Context, wt Watcher) (*liveStream, error) {
	lists, err := s.listBoth(ctx, s.opts.Source.EffectivePolicies)
	if err != nil {
		return nil, err
	}
	ls := &liveStream{items: map[string]runtime.Object{}, events: make(chan watch.Event), ended: make(chan error, len(lists))}
	for _, obj := range render.Items(lists...) {
		ls.put(obj)
	}
	for i, list := range lists {
		rv := ""
		if la, err := meta.ListAccessor(list); err == nil {
			rv = la.GetResourceVersion()
		}
		// listBoth answers the namespaced list first, then the cluster-scoped one when allowed.
		wi, err := wt.WatchEffectivePolicies(ctx, s.opts.Namespace, i == 1, rv)
		if err != nil {
			ls.stop()
			return nil, err
		}
		ls.watches = append(ls.watches, wi)
		go ls.forward(ctx, wi)
	}
	return ls, nil
}

// forward passes the events of one watch on until it ends.
func (ls *liveStream) forward(ctx context.Context, wi watch.Interface) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-wi.ResultChan():
			if !ok {
				ls.ended <- fmt.Errorf("the watch ended")
				return
			}
			if ev.Type == watch.Error {
				ls.ended <- apierrors.FromObject(ev.Object)
				return
			}
			select {
			case ls.events <- ev:
			case <-ctx.Done():
				return
			}
		}
	}
}

func (ls *liveStream) stop() {
	for _, wi := range ls.watches {
		wi.Stop()
	}
}

func itemKey(obj runtime.Object) (string, bool) {
	a, err := meta.Accessor(obj)
	if err != nil {
		return "", false
	}
	return a.GetNamespace() + "/" + a.GetName(), true
}

func (ls *liveStream) put(obj runtime.Object) {
	if k, ok := itemKey(obj); ok {
		ls.items[k] = obj
	}
}

// apply brings the items to one event; it reports whether they changed.
func (ls *liveStream) apply(ev watch.Event) bool {
	switch ev.Type {
	case watch.Added, watch.Modified:
		ls.put(ev.Object)
		return true
	case watch.Deleted:
		if k, ok := itemKey(ev.Object); ok {
			delete(ls.items, k)
			return true
		}
	}
	return false
}

// graph draws the items in a fixed order, so that the same items give the
// same bytes and an unchanged graph is not sent again. A focused Gateway
// that went away gives way to the default focus.
func (ls *liveStream) graph() (Graph, error) {
	keys := make([]string, 0, len(ls.items))
	for k := range ls.items {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	objs := make([]runtime.Object, len(keys))
	for i, k := range keys {
		objs[i] = ls.items[k]
	}
	g, err := graphFor(objs, ls.focus)
	if err != nil && ls.focus != "" {
		return graphFor(objs, "")
	}
	return g, err
}

// follow sends the graph, then each changed graph once the events of a
// change have settled, until the page goes or a watch ends.
func (ls *liveStream) follow(ctx context.Context, out *sseWriter, first Graph) {
	last, err := out.graph(first, nil)
	if err != nil {
		return
	}
	beat := time.NewTicker(liveHeartbeat)
	defer beat.Stop()
	settle := time.NewTimer(0)
	<-settle.C
	pending := false
	for {
		select {
		case <-ctx.Done():
			return
		case err := <-ls.ended:
			_ = out.event("end", map[string]string{"reason": err.Error()})
			return
		case ev := <-ls.events:
			if ls.apply(ev) && !pending {
				pending = true
				settle.Reset(liveSettle)
			}
		case <-settle.C:
			pending = false
			g, err := ls.graph()
			if err == nil {
				last, err = out.graph(g, last)
			}
			if err != nil {
				return
			}
		case <-beat.C:
			if out.comment("heartbeat") != nil {
				return
			}
		}
	}
}

// sseWriter writes Server-Sent Events (text/event-stream).
type sseWriter struct {
	w  http.ResponseWriter
	fl http.Flusher
}

// graph sends g unless it is last (its encoding); it returns g's encoding.
func (o *sseWriter) graph(g Graph, last []byte) ([]byte, error) {
	b, err := json.Marshal(g)
	if err != nil {
		return last, err
	}
	if bytes.Equal(b, last) {
		return last, nil
	}
	return b, o.raw("graph", b)
}

func (o *sseWriter) event(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return o.raw(name, b)
}

// raw sends one event; JSON has no newline, so data is one line.
func (o *sseWriter) raw(name string, data []byte) error {
	if _, err := fmt.Fprintf(o.w, "event: %s\ndata: %s\n\n", name, data); err != nil {
		return err
	}
	o.fl.Flush()
	return nil
}

func (o *sseWriter) comment(text string) error {
	if _, err := fmt.Fprintf(o.w, ": %s\n\n", text); err != nil {
		return err
	}
	o.fl.Flush()
	return nil
}

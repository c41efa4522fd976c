package ui

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// Watcher is a Source that can follow changes: the cluster's API, watched
// with the user's own credentials (so a watch shows what `kubectl get -w`
// would show them). The manifests of --offline do not change, so the
// offline source is no Watcher and the page has no Live view there.
type Watcher interface {
	// WatchEffectivePolicies watches as EffectivePolicies lists, from
	// resourceVersion (that of the list).
	WatchEffectivePolicies(ctx context.Context, namespace string, cluster bool, resourceVersion string) (watch.Interface, error)
	// WatchPolicyReaches watches as PolicyReaches lists, from resourceVersion.
	WatchPolicyReaches(ctx context.Context, namespace string, cluster bool, resourceVersion string) (watch.Interface, error)
}

const (
	// liveSettle gathers the events of one change: a policy edit changes
	// many targets at once, and the page should redraw once.
	liveSettle = 250 * time.Millisecond
	// liveHeartbeat is how often an idle stream sends a comment, so that a
	// page gone away is noticed (the write fails) and its stream ends.
	liveHeartbeat = 20 * time.Second
)

// live streams the graph to the page as Server-Sent Events: "graph" with
// the whole graph when the stream starts and after each change, "end" (with
// the reason) when the server's watches end for good (a relist failed),
// after which the page connects again and gets the current graph. The
// streams read the server's one list and watch (store.go), so a page's
// stream lists nothing itself. A page that sends the tag of the graph it
// drew (drawn, the X-EffectivePolicy-Graph header of /api/graph) gets
// "unchanged" instead of a first graph that is the same, so that it does
// not read and lay out the same graph twice. The token guards it as every
// /api/ endpoint; the page reads it with fetch, which sends the token
// header (EventSource cannot).
func (s *Server) live(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.opts.Source.(Watcher); !ok {
		writeError(w, http.StatusNotImplemented, "no live updates offline: the page shows the manifests as they were read")
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "this connection cannot stream")
		return
	}
	ctx := r.Context()
	run, err := s.store.get(ctx, s.life)
	if err != nil {
		answer(w, nil, err)
		return
	}
	changes, unsubscribe := run.subscribe()
	defer unsubscribe()
	focus := r.URL.Query().Get("gateway")
	first, err := liveGraph(run, focus)
	if err != nil {
		answer(w, nil, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	out := &sseWriter{w: w, fl: fl}
	if first.tag == r.URL.Query().Get("drawn") {
		err = out.event("unchanged", map[string]string{"tag": first.tag})
	} else {
		err = out.rawGraph(first)
	}
	if err == nil {
		follow(ctx, out, run, changes, focus, first.body)
	}
}

// liveGraph draws the store's items; a focused Gateway that went away
// gives way to the default focus.
func liveGraph(run *storeRun, focus string) (*cachedGraph, error) {
	g, err := run.graph(focus)
	if err != nil && focus != "" {
		return run.graph("")
	}
	return g, err
}

// follow sends each changed graph once the changes have settled (last is
// the encoding sent, or drawn, last), until the page goes or the store's
// run ends.
func follow(ctx context.Context, out *sseWriter, run *storeRun, changes <-chan struct{}, focus string, last []byte) {
	beat := time.NewTicker(liveHeartbeat)
	defer beat.Stop()
	settle := time.NewTimer(0)
	<-settle.C
	pending := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-run.ended:
			_ = out.event("end", map[string]string{"reason": run.reason().Error()})
			return
		case <-changes:
			if !pending {
				pending = true
				settle.Reset(liveSettle)
			}
		case <-settle.C:
			pending = false
			g, err := liveGraph(run, focus)
			if err == nil && !bytes.Equal(g.body, last) {
				last, err = g.body, out.rawGraph(g)
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

// graphTag names a graph's encoding: the page sends it back to say which
// graph it drew.
func graphTag(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// sseWriter writes Server-Sent Events (text/event-stream).
type sseWriter struct {
	w  http.ResponseWriter
	fl http.Flusher
}

// rawGraph sends a graph's encoding with its tag as the event's id: the
// page sends back the tag of the graph it drew when it connects again.
func (o *sseWriter) rawGraph(g *cachedGraph) error {
	if _, err := fmt.Fprintf(o.w, "id: %s\n", g.tag); err != nil {
		return err
	}
	return o.raw("graph", g.body)
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

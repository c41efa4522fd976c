// Package edits times policy edits through kube-apiserver to the last
// watch event they cause: one raw watch on every EffectivePolicy, edits that
// write a fresh marker into a policy, and the outputs expected to carry it.
// It also proposes the same edit as an EffectivePolicyReview.
package edits

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/measure"
)

// Watcher keeps one watch on every EffectivePolicy open (reopening it from
// the last resourceVersion if the server closes it) and reports the outputs
// whose JSON contains the current edit's marker.
type Watcher struct {
	marker atomic.Pointer[string]
	hits   chan hit
	cancel context.CancelFunc
	done   chan struct{}
}

type hit struct {
	key string
	at  time.Time
}

// watchEvent is the part of a watch event the watcher reads.
type watchEvent struct {
	Type   string `json:"type"`
	Object struct {
		Metadata struct {
			Name            string `json:"name"`
			Namespace       string `json:"namespace"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	} `json:"object"`
}

// NewWatcher watches every EffectivePolicy from rv, reading the raw stream:
// an event has arrived when its line has been read, and it carries the
// marker when its bytes contain it. What a client does with an event after it
// arrives (decode it into a typed object, ~0.2 ms for 13 KB; into
// unstructured maps, several times that) is the client's cost, not the
// server's delivery; decoding every event into unstructured maps first, as
// the dynamic client does, had made the last of 413 events wait ~0.3 s
// behind the client's own work on these 2 cores.
func NewWatcher(ctx context.Context, rc rest.Interface, rv string) (*Watcher, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{hits: make(chan hit, 100000), cancel: cancel, done: make(chan struct{})}
	empty := ""
	w.marker.Store(&empty)
	open := func(rv string) (io.ReadCloser, error) {
		return rc.Get().AbsPath(measure.EPPath).Param("watch", "true").Param("resourceVersion", rv).
			Param("allowWatchBookmarks", "true").SetHeader("Accept", "application/json").Stream(ctx)
	}
	body, err := open(rv)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("watch effectivepolicies from %s: %w", rv, err)
	}
	go func() {
		defer close(w.done)
		for {
			br := bufio.NewReaderSize(body, 1<<20)
			for {
				line, err := br.ReadBytes('\n')
				if err != nil {
					break
				}
				now := time.Now()
				var ev watchEvent
				if json.Unmarshal(line, &ev) != nil {
					continue
				}
				if ev.Object.Metadata.ResourceVersion != "" {
					rv = ev.Object.Metadata.ResourceVersion
				}
				m := *w.marker.Load()
				if m == "" || (ev.Type != string(watch.Modified) && ev.Type != string(watch.Added)) {
					continue
				}
				if bytes.Contains(line, []byte(m)) {
					w.hits <- hit{key: ev.Object.Metadata.Namespace + "/" + ev.Object.Metadata.Name, at: now}
				}
			}
			_ = body.Close()
			if ctx.Err() != nil {
				return
			}
			for {
				body, err = open(rv)
				if err == nil {
					break
				}
				if ctx.Err() != nil {
					return
				}
				measure.Logf("re-opening the watch from %s: %v", rv, err)
				time.Sleep(time.Second)
			}
		}
	}()
	return w, nil
}

// Stop closes the watch and waits for its reader to end.
func (w *Watcher) Stop() { w.cancel(); <-w.done }

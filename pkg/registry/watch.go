package registry

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
)

// filterWatch sends the initial events of a watch, then forwards the
// backend's events through the label and field selection. An object that
// stops matching the selection is sent as DELETED, one that starts matching
// as ADDED, as the watch cache does. Every object sent is a copy, since the
// API machinery sets its TypeMeta while encoding.
type filterWatch struct {
	r   *REST
	p   predicate
	src watch.Interface

	initial    []*encoded.Object
	initialRV  uint64
	endInitial bool // send the k8s.io/initial-events-end bookmark
	bookmarks  bool
	// redact hides the sensitive fields this watcher's caller may not see.
	redact func(*encoded.Object) *encoded.Object

	// visible records, per key, whether the client holds the object. When
	// complete is false (a watch resumed from a resourceVersion) an absent key
	// is unknown and treated as possibly held.
	visible  map[string]bool
	complete bool

	out  chan watch.Event
	done chan struct{}
	once sync.Once
}

func (w *filterWatch) Stop() {
	w.once.Do(func() {
		close(w.done)
		w.src.Stop()
	})
}

func (w *filterWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *filterWatch) send(ctx context.Context, e watch.Event) bool {
	select {
	case w.out <- e:
		return true
	case <-w.done:
		return false
	case <-ctx.Done():
		return false
	}
}

func (w *filterWatch) run(ctx context.Context) {
	defer close(w.out)
	defer w.Stop()
	for _, o := range w.initial {
		if !w.send(ctx, watch.Event{Type: watch.Added, Object: w.redact(served(o))}) {
			return
		}
	}
	w.initial = nil
	if w.endInitial {
		bm := w.r.bookmark(strconv.FormatUint(w.initialRV, 10))
		bm.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
		if !w.send(ctx, watch.Event{Type: watch.Bookmark, Object: bm}) {
			return
		}
	}
	for {
		var e watch.Event
		var ok bool
		select {
		case e, ok = <-w.src.ResultChan():
			if !ok {
				return
			}
		case <-w.done:
			return
		case <-ctx.Done():
			return
		}
		out, keep := w.filter(e)
		if !keep {
			continue
		}
		if !w.send(ctx, out) {
			return
		}
	}
}

// filter maps a backend event to the event the client sees, if any.
func (w *filterWatch) filter(e watch.Event) (watch.Event, bool) {
	switch e.Type {
	case watch.Added, watch.Modified, watch.Deleted:
	case watch.Bookmark:
		// The backend's bookmarks may be of any type; clients expect their kind.
		m, err := meta.Accessor(e.Object)
		if !w.bookmarks || err != nil {
			return e, false
		}
		return watch.Event{Type: watch.Bookmark, Object: w.r.bookmark(m.GetResourceVersion())}, true
	default:
		return e, true // errors pass through
	}
	o, err := output(e.Object)
	if err != nil {
		return watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(err).ErrStatus}, true
	}
	if w.p.empty() {
		return watch.Event{Type: e.Type, Object: w.redact(served(o))}, true
	}
	k := key(o)
	held, known := w.visible[k]
	mayHold := held || (!known && !w.complete)
	match := w.p.matches(o)
	var typ watch.EventType
	switch {
	case e.Type == watch.Deleted:
		if !match && !mayHold {
			return e, false
		}
		typ = watch.Deleted
	case match && (held || (!known && !w.complete && e.Type == watch.Modified)):
		typ = watch.Modified
	case match:
		typ = watch.Added
	case mayHold:
		typ = watch.Deleted
	default:
		w.setVisible(k, false)
		return e, false
	}
	w.setVisible(k, typ != watch.Deleted)
	return watch.Event{Type: typ, Object: w.redact(served(o))}, true
}

// output is the one point where the REST layer takes an object back from
// the runtime.Object of a backend's watch event, which the Backend contract
// makes an *encoded.Object. Anything else is a bug of the backend: the
// client gets an error event (and relists) rather than a wrong object.
func output(obj runtime.Object) (*encoded.Object, error) {
	o, ok := obj.(*encoded.Object)
	if !ok {
		return nil, fmt.Errorf("the backend sent a %T in a watch event, not an *encoded.Object", obj)
	}
	return o, nil
}

// bookmark is a BOOKMARK event's object at resourceVersion rv: an object of
// the resource's kind with nothing but the resourceVersion, in the form of
// every other object the REST layer hands out.
func (r *REST) bookmark(rv string) *encoded.Object {
	return &encoded.Object{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}, Kind: r.kind, Summary: &encoded.Summary{}}
}

// setVisible records whether the client holds key k. A complete watch only
// remembers held keys, so the map stays as small as the selection.
func (w *filterWatch) setVisible(k string, held bool) {
	if !held && w.complete {
		delete(w.visible, k)
		return
	}
	w.visible[k] = held
}

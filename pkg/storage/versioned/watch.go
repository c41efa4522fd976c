package versioned

// Watches: each watcher has its own queue of events, filled by Apply under the
// store's lock and drained by its own goroutine; a watcher that falls too far
// behind is stopped (the client resumes from its last resourceVersion or re-lists).

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/resourceversion"
)

// Watch streams the changes after rv (registry.Backend). rv 0 stands for counter 0 of the
// store's epoch (the start of its history); a resourceVersion of another epoch
// answers 410 Gone.
func (s *Store[T]) Watch(ctx context.Context, namespace string, rv uint64) (watch.Interface, error) {
	if !s.opts.Namespaced {
		namespace = ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if rv == 0 {
		rv = resourceversion.Make(s.epoch, 0)
	}
	if resourceversion.EpochOf(rv) != s.epoch {
		return nil, apierrors.NewResourceExpired(fmt.Sprintf("resource version %d is from another server instance or an older cache (epoch %d, this server's is %d); relist", rv, resourceversion.EpochOf(rv), s.epoch))
	}
	if rv < s.minRV {
		return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", rv, s.minRV))
	}
	if rv > s.rv {
		return nil, apierrors.NewResourceExpired(fmt.Sprintf("unknown resource version: %d (current %d)", rv, s.rv))
	}
	w := newWatcher(s, namespace, rv)
	i := sort.Search(len(s.history), func(i int) bool { return s.history[i].rv > rv })
	w.push(s.history[i:])
	w.offered = s.rv
	s.watchers[w] = struct{}{}
	watchersGauge.WithLabelValues(s.opts.Resource.Resource).Inc() // metric: one open watch more (Dec in stopLocked)
	go w.run(ctx)
	return w, nil
}

// watcher forwards events from an unbounded queue to its result channel,
// so that Apply never blocks on a slow client.
type watcher[T Object] struct {
	s         *Store[T]
	namespace string
	result    chan watch.Event

	mu    sync.Mutex
	queue []event[T]
	// offered is the resourceVersion up to which every event has been
	// offered to push (queued, or filtered out by namespace).
	offered uint64
	signal  chan struct{}
	done    chan struct{}
	once    sync.Once
}

func newWatcher[T Object](s *Store[T], namespace string, rv uint64) *watcher[T] {
	return &watcher[T]{
		s:         s,
		namespace: namespace,
		offered:   rv,
		result:    make(chan watch.Event),
		signal:    make(chan struct{}, 1),
		done:      make(chan struct{}),
	}
}

// push queues the events of the watcher's namespace. Called with s.mu held.
func (w *watcher[T]) push(events []event[T]) {
	w.mu.Lock()
	n := 0
	for _, e := range events {
		if w.namespace == "" || e.namespace == w.namespace {
			w.queue = append(w.queue, e)
			n++
		}
		w.offered = e.rv
	}
	overflow := len(w.queue) > w.s.maxQueue()
	if overflow {
		w.queue = nil
	}
	w.mu.Unlock()
	if overflow {
		// Too slow a reader: end its watch (the client resumes from the last
		// resourceVersion it got, or relists) rather than buffer without bound.
		w.stopLocked()
		return
	}
	if n > 0 {
		select {
		case w.signal <- struct{}{}:
		default:
		}
	}
}

// maxQueue is how many undelivered events a watch may have before it is ended.
func (s *Store[T]) maxQueue() int {
	return 2 * max(s.opts.HistorySize, 1000)
}

func (w *watcher[T]) run(ctx context.Context) {
	defer close(w.result)
	defer w.Stop()
	var tick <-chan time.Time
	if w.s.opts.BookmarkInterval > 0 {
		t := time.NewTicker(w.s.opts.BookmarkInterval)
		defer t.Stop()
		tick = t.C
	}
	var sent uint64 // resourceVersion of the last event or bookmark sent
	send := func(e watch.Event) bool {
		select {
		case w.result <- e:
			return true
		case <-w.done:
			return false
		case <-ctx.Done():
			return false
		}
	}
	for {
		w.mu.Lock()
		if len(w.queue) > 0 {
			// One at a time, so that the queue length is what the reader lags.
			e := w.queue[0]
			w.queue[0] = event[T]{}
			w.queue = w.queue[1:]
			w.mu.Unlock()
			if !send(watch.Event{Type: e.typ, Object: e.obj}) {
				return
			}
			sent = e.rv
			continue
		}
		offered := w.offered
		w.mu.Unlock()
		select {
		case <-w.signal:
		case <-tick:
			if offered > sent {
				bm := &metav1.PartialObjectMetadata{}
				bm.ResourceVersion = resourceversion.Format(offered)
				if !send(watch.Event{Type: watch.Bookmark, Object: bm}) {
					return
				}
				sent = offered
			}
		case <-w.done:
			return
		case <-ctx.Done():
			return
		}
	}
}

// Stop implements watch.Interface.
func (w *watcher[T]) Stop() {
	w.s.mu.Lock()
	w.stopLocked()
	w.s.mu.Unlock()
}

func (w *watcher[T]) stopLocked() {
	w.once.Do(func() {
		delete(w.s.watchers, w)
		watchersGauge.WithLabelValues(w.s.opts.Resource.Resource).Dec() // metric: the watch is over
		close(w.done)
	})
}

// ResultChan implements watch.Interface.
func (w *watcher[T]) ResultChan() <-chan watch.Event { return w.result }

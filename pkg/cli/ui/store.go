package ui

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/pagedlist"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/render"
)

const (
	// relistFirst and relistLast bound the wait before a relist after a
	// watch ended, doubling while watches end without an event, as
	// client-go's reflector backs off: an API server that closes every
	// watch at once is not listed again in a loop.
	relistFirst = 800 * time.Millisecond
	relistLast  = 30 * time.Second
	// minWatch: a watch closed sooner with no event is taken as refused and
	// relisted (client-go's reflector has the same rule), so that a server
	// closing each watch at once is not watched again in a loop.
	minWatch = time.Second
)

// listFunc lists as Source.EffectivePolicies does; watchFunc watches as
// Watcher.WatchEffectivePolicies does.
type (
	listFunc  func(ctx context.Context, namespace string, cluster bool) (runtime.Object, error)
	watchFunc func(ctx context.Context, namespace string, cluster bool, resourceVersion string) (watch.Interface, error)
)

// newLiveStore is the store of what list and watch answer, in namespace.
func newLiveStore(what string, list listFunc, watch watchFunc, namespace string) *liveStore {
	return &liveStore{what: what, list: list, watch: watch, namespace: namespace, relist: relistFirst}
}

// liveStore is the server's one list and watch of the page's
// EffectivePolicies (or of its PolicyReaches), with the user's
// credentials: every /api/graph and every Live stream reads it (every
// /api/reaches the PolicyReaches'), so that a list (seconds at scale 1) is
// made once, not once per request and per stream. It is started by the first
// caller (Serve starts it, so the list runs while the user opens the
// page); a list that fails is that caller's error, and the next caller
// lists again, so every request sees the errors it saw when it listed
// itself.
type liveStore struct {
	// what names the objects in errors ("the effective policies").
	what  string
	list  listFunc
	watch watchFunc
	// namespace is the page's (Options.Namespace).
	namespace string
	// relist is the first wait before a relist (relistFirst; tests shorten it).
	relist time.Duration

	mu       sync.Mutex
	starting *storeStart
	running  *storeRun
}

// storeStart is one start under way: done closes when run or err is set.
type storeStart struct {
	done chan struct{}
	run  *storeRun
	err  error
	// listed and total are how far its list is (pagedlist.Progress), for
	// the page to say while it waits; total is -1 when not known.
	listed, total atomic.Int64
}

// storeRun is one list and its watches: the items of each list (the
// namespaced one, then the cluster-scoped one when the user may list it),
// a version that counts their changes, and the streams to tell.
type storeRun struct {
	cancel context.CancelFunc
	// ended closes when a relist failed (err says why): the run is over and
	// the next caller lists again.
	ended chan struct{}

	mu      sync.Mutex
	err     error
	scopes  []cache.Store
	version uint64
	// objs is the items sorted by key, as of objsAt (a version).
	objs   []runtime.Object
	objsAt uint64
	subs   map[chan struct{}]struct{}
	// graphs are the graphs drawn from the items, by version and focus.
	graphs graphCache
}

// get is the store's run, started (listed) if need be; it waits for a
// start under way rather than listing again.
func (s *liveStore) get(ctx context.Context, life context.Context) (*storeRun, error) {
	s.mu.Lock()
	if s.running != nil {
		r := s.running
		s.mu.Unlock()
		return r, nil
	}
	st := s.starting
	if st == nil {
		st = &storeStart{done: make(chan struct{})}
		s.starting = st
		go s.start(life, st)
	}
	s.mu.Unlock()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-st.done:
		return st.run, st.err
	}
}

// listing is how far the first list under way is: the objects listed so
// far and how many in all (-1: not known); ok is false when no list is
// under way or it has not said (a list of one page never says).
func (s *liveStore) listing() (listed, total int64, ok bool) {
	s.mu.Lock()
	st := s.starting
	s.mu.Unlock()
	if st == nil {
		return 0, 0, false
	}
	listed = st.listed.Load()
	return listed, st.total.Load(), listed > 0
}

// start lists as listBoth does (the same calls, so the same errors and
// the same visibility) and watches each list from its resourceVersion.
// It runs on life (the server's), not on the request that asked: others
// may be waiting for it.
func (s *liveStore) start(life context.Context, st *storeStart) {
	progress := pagedlist.WithProgress(life, func(listed, total int64) {
		st.total.Store(total)
		st.listed.Store(listed)
	})
	lists, err := listBoth(progress, s.namespace, s.list)
	var run *storeRun
	if err == nil {
		run, err = s.run(life, lists)
	}
	s.mu.Lock()
	st.run, st.err = run, err
	s.starting = nil
	s.running = run
	s.mu.Unlock()
	close(st.done)
}

func (s *liveStore) run(life context.Context, lists []runtime.Object) (*storeRun, error) {
	ctx, cancel := context.WithCancel(life)
	r := &storeRun{cancel: cancel, ended: make(chan struct{}), subs: map[chan struct{}]struct{}{}}
	rvs := make([]string, len(lists))
	for i, list := range lists {
		st := cache.NewStore(cache.MetaNamespaceKeyFunc)
		if err := st.Replace(itemsOf(list), ""); err != nil {
			cancel()
			return nil, err
		}
		r.scopes = append(r.scopes, st)
		if la, err := meta.ListAccessor(list); err == nil {
			rvs[i] = la.GetResourceVersion()
		}
	}
	for i := range lists {
		// listBoth answers the namespaced list first, then the cluster-scoped one when allowed.
		go s.follow(ctx, r, i, rvs[i])
	}
	return r, nil
}

// follow watches one list from rv. A watch the API server closes (it
// ends every watch after a while) is watched again from the last
// resourceVersion seen, as client-go's reflector does; a watch that ends
// in an error (such as a resourceVersion too old), that cannot start, or
// that closes at once with nothing seen is followed by a relist and a new
// watch. A relist that fails ends the run.
func (s *liveStore) follow(ctx context.Context, r *storeRun, scope int, rv string) {
	cluster := scope == 1
	wait := s.relist
	for {
		w, err := s.watch(ctx, s.namespace, cluster, rv)
		if err == nil {
			started := time.Now()
			var events int
			var closed bool
			rv, events, closed = r.consume(ctx, scope, w, rv)
			w.Stop()
			if events > 0 {
				wait = s.relist
			}
			if closed && (events > 0 || time.Since(started) >= minWatch) {
				continue
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, relistLast)
		list, err := s.list(ctx, s.namespace, cluster)
		if err == nil {
			err = r.replace(scope, list)
		}
		if err != nil {
			s.end(r, err)
			return
		}
		if la, err := meta.ListAccessor(list); err == nil {
			rv = la.GetResourceVersion()
		}
	}
}

// consume applies a watch's events until it ends; it answers the last
// resourceVersion seen, the number of events (bookmarks too), and whether
// the watch was closed (not ended by an error event or by ctx).
func (r *storeRun) consume(ctx context.Context, scope int, w watch.Interface, rv string) (string, int, bool) {
	n := 0
	for {
		select {
		case <-ctx.Done():
			return rv, n, false
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type == watch.Error {
				return rv, n, !ok
			}
			n++
			if a, err := meta.Accessor(ev.Object); err == nil && a.GetResourceVersion() != "" {
				rv = a.GetResourceVersion()
			}
			r.apply(scope, ev)
		}
	}
}

// apply brings one list's items to an event and tells the streams.
func (r *storeRun) apply(scope int, ev watch.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.scopes[scope]
	var err error
	switch ev.Type {
	case watch.Added, watch.Modified:
		err = st.Update(ev.Object)
	case watch.Deleted:
		err = st.Delete(ev.Object)
	default:
		// A bookmark moves the resourceVersion only.
		return
	}
	if err == nil {
		r.changed()
	}
}

// replace sets one list's items to a relist's.
func (r *storeRun) replace(scope int, list runtime.Object) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.scopes[scope].Replace(itemsOf(list), ""); err != nil {
		return err
	}
	r.changed()
	return nil
}

// changed counts a change and tells each stream (once, however many
// changes it has not read yet); r.mu is held.
func (r *storeRun) changed() {
	r.version++
	for c := range r.subs {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// end ends r with err: the streams say why and end, and the next caller
// lists again.
func (s *liveStore) end(r *storeRun, err error) {
	s.mu.Lock()
	if s.running == r {
		s.running = nil
	}
	s.mu.Unlock()
	r.mu.Lock()
	r.err = fmt.Errorf("listing %s again after their watch ended: %w", s.what, err)
	r.mu.Unlock()
	r.cancel()
	close(r.ended)
}

// reason is why r ended.
func (r *storeRun) reason() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// subscribe answers a channel that gets a value after each change, and
// the function that stops it.
func (r *storeRun) subscribe() (<-chan struct{}, func()) {
	c := make(chan struct{}, 1)
	r.mu.Lock()
	r.subs[c] = struct{}{}
	r.mu.Unlock()
	return c, func() {
		r.mu.Lock()
		delete(r.subs, c)
		r.mu.Unlock()
	}
}

// objects are the items sorted by key (namespace/name), so that the same
// items draw the same graph, byte for byte, whoever asks; the slice is
// shared, read-only, until the next change.
func (r *storeRun) objects() []runtime.Object {
	objs, _ := r.snapshot()
	return objs
}

// graph is the graph of the items focused on focus (graphFor), drawn once
// per version of the items and focus.
func (r *storeRun) graph(focus string) (*cachedGraph, error) {
	objs, version := r.snapshot()
	return r.graphs.get(objs, version, focus)
}

// snapshot is objects and the version they are of.
func (r *storeRun) snapshot() ([]runtime.Object, uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.objs != nil && r.objsAt == r.version {
		return r.objs, r.version
	}
	type keyed struct {
		key string
		obj runtime.Object
	}
	var all []keyed
	for _, st := range r.scopes {
		for _, obj := range st.List() {
			k, err := cache.MetaNamespaceKeyFunc(obj)
			if err != nil {
				continue
			}
			all = append(all, keyed{k, obj.(runtime.Object)})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].key < all[j].key })
	objs := make([]runtime.Object, len(all))
	for i, k := range all {
		objs[i] = k.obj
	}
	r.objs, r.objsAt = objs, r.version
	return objs, r.version
}

// itemsOf are a list's items as a cache.Store takes them.
func itemsOf(list runtime.Object) []any {
	objs := render.Items(list)
	out := make([]any, len(objs))
	for i, o := range objs {
		out[i] = o
	}
	return out
}

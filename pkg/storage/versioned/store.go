// Package versioned is an in-memory, versioned object store for one
// resource. It hands out monotonically increasing resourceVersions, keeps a
// bounded history of watch events, and serves Get, List and Watch for the REST
// layer: its methods are those of registry.Backend and registry.EpochBackend.
// It does not import pkg/registry (storage sits below the REST layer, see
// docs/storage.md, "Layering"); the packages that hand a Store to the REST
// layer check that it fits.
//
// A resourceVersion is epoch<<CounterBits | counter
// (pkg/storage/resourceversion). The epoch names one history: it is chosen
// at random for a new history and restored with a cached one. Replicas number
// their histories independently; a resourceVersion of another epoch is not a
// point of this store's history, and a watch from it answers 410 Gone (so
// that the client relists) instead of resuming from an unrelated state.
//
// Objects held by the store are shared: everything it returns (from Get, List,
// Snapshot, Apply and watch events) must be treated as read-only.
package versioned

import (
	"context"
	"crypto/sha1"
	"fmt"
	"sort"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/resourceversion"
)

// DefaultHistorySize is the number of watch events kept when Options.HistorySize is 0.
const DefaultHistorySize = 10000

// DefaultBookmarkInterval is how often an idle watch gets a BOOKMARK when
// Options.BookmarkInterval is 0.
const DefaultBookmarkInterval = time.Minute

// Object is what a Store holds: an API object with its own metadata, by
// pointer (so that a nil one can stand for a delete). The live layer's
// stores hold *encoded.Object, the form the REST layer serves; the store's
// own tests hold typed objects.
type Object interface {
	comparable
	runtime.Object
	metav1.Object
}

// Change is one put or delete in an Apply. A nil Object means delete.
type Change[T Object] struct {
	Namespace, Name string
	Object          T
}

// Options configure a Store.
type Options struct {
	// Namespaced stores key objects by namespace and name; cluster-scoped
	// stores ignore the namespace.
	Namespaced bool
	// HistorySize is the number of watch events kept for watches that resume
	// from a resourceVersion (DefaultHistorySize when 0). All events of one
	// resourceVersion are kept or dropped together. A watch that falls more
	// than 2*max(HistorySize, 1000) events behind is ended.
	HistorySize int
	// Resource names the resource in NotFound and Gone errors.
	Resource schema.GroupResource
	// Now returns the creationTimestamp of new objects (time.Now when nil).
	Now func() time.Time
	// BookmarkInterval is how often a watch sends a BOOKMARK event when it
	// has sent everything up to a newer resourceVersion than its last event
	// or bookmark (DefaultBookmarkInterval when 0, never when negative).
	// Bookmarks carry a *metav1.PartialObjectMetadata holding only the
	// resourceVersion; the REST layer turns them into objects of its kind and
	// drops them for clients that did not ask for bookmarks.
	BookmarkInterval time.Duration
	// Epoch of the store's history (resourceversion.NewEpoch() when 0;
	// values above resourceversion.MaxEpoch are truncated). Restore replaces
	// it.
	Epoch uint32
}

type event[T Object] struct {
	rv        uint64
	namespace string
	typ       watch.EventType
	obj       T
}

// Store is an in-memory versioned store of one resource, holding objects of
// type T.
type Store[T Object] struct {
	opts Options

	mu      sync.RWMutex
	epoch   uint32
	objects map[string]T // key: namespace/name
	// sorted holds the keys of objects in order, maintained by Apply and
	// Restore, so that a List does not sort on every request.
	sorted []string
	rv     uint64
	// history holds the events with rv in (minRV, rv], oldest first.
	history  []event[T]
	minRV    uint64
	watchers map[*watcher[T]]struct{}
}

// New returns an empty Store at counter 0 of its epoch.
func New[T Object](opts Options) *Store[T] {
	registerMetrics()
	if opts.HistorySize <= 0 {
		opts.HistorySize = DefaultHistorySize
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.BookmarkInterval == 0 {
		opts.BookmarkInterval = DefaultBookmarkInterval
	}
	epoch := opts.Epoch & resourceversion.MaxEpoch
	if epoch == 0 {
		epoch = resourceversion.NewEpoch()
	}
	start := resourceversion.Make(epoch, 0)
	return &Store[T]{
		opts:     opts,
		epoch:    epoch,
		rv:       start,
		minRV:    start,
		objects:  map[string]T{},
		watchers: map[*watcher[T]]struct{}{},
	}
}

// Epoch returns the epoch of the store's history.
func (s *Store[T]) Epoch() uint32 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.epoch
}

// ForeignResourceVersion reports whether rv (non-zero) belongs to another
// history than the store's: another replica's, or an older cache's
// (registry.EpochBackend).
func (s *Store[T]) ForeignResourceVersion(rv uint64) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return rv != 0 && resourceversion.EpochOf(rv) != s.epoch
}

func (s *Store[T]) key(namespace, name string) (string, string) {
	if !s.opts.Namespaced {
		namespace = ""
	}
	return namespace + "/" + name, namespace
}

// Restore replaces the content of the store by objs (which keep their own
// metadata: resourceVersion, creationTimestamp, uid), sets the store's epoch
// (kept when 0) and its resourceVersion to rv (counter 0 of the epoch when rv
// belongs to another epoch, e.g. 0; raised to the highest object
// resourceVersion of the epoch if that is larger). The watch history starts
// empty at rv. It is meant for start-up, before serving; running watches are
// stopped.
func (s *Store[T]) Restore(objs []T, epoch uint32, rv uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if epoch &= resourceversion.MaxEpoch; epoch != 0 {
		s.epoch = epoch
	}
	if resourceversion.EpochOf(rv) != s.epoch {
		rv = resourceversion.Make(s.epoch, 0)
	}
	s.objects = make(map[string]T, len(objs))
	for _, o := range objs {
		if orv, err := resourceversion.Parse(o.GetResourceVersion()); err == nil && orv > rv && resourceversion.EpochOf(orv) == s.epoch {
			rv = orv
		}
		k, _ := s.key(o.GetNamespace(), o.GetName())
		s.objects[k] = o
	}
	s.sorted = make([]string, 0, len(s.objects))
	for k := range s.objects {
		s.sorted = append(s.sorted, k)
	}
	sort.Strings(s.sorted)
	s.rv = rv
	s.minRV = rv
	s.history = nil
	for w := range s.watchers {
		w.stopLocked()
	}
}

// ResourceVersion returns the store's current resourceVersion.
func (s *Store[T]) ResourceVersion() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.rv
}

// Snapshot returns every object, sorted by key, and the current
// resourceVersion, e.g. for persistence.
func (s *Store[T]) Snapshot() ([]T, uint64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.sortedLocked(""), s.rv
}

func (s *Store[T]) sortedLocked(namespace string) []T {
	keys := s.sorted
	if namespace != "" {
		// Keys are "namespace/name": those of one namespace are contiguous.
		prefix := namespace + "/"
		lo := sort.SearchStrings(keys, prefix)
		hi := lo
		for hi < len(keys) && len(keys[hi]) > len(prefix) && keys[hi][:len(prefix)] == prefix {
			hi++
		}
		keys = keys[lo:hi]
	}
	out := make([]T, len(keys))
	for i, k := range keys {
		out[i] = s.objects[k]
	}
	return out
}

// updateSortedLocked brings s.sorted up to date after Apply added the keys
// added and removed the keys removed: one merge, O(n) per Apply instead of a
// sort per List.
func (s *Store[T]) updateSortedLocked(added []string, removed map[string]bool) {
	if len(added) == 0 && len(removed) == 0 {
		return
	}
	sort.Strings(added)
	out := make([]string, 0, len(s.sorted)+len(added)-len(removed))
	i := 0
	for _, k := range s.sorted {
		if removed[k] {
			continue
		}
		for i < len(added) && added[i] < k {
			out = append(out, added[i])
			i++
		}
		out = append(out, k)
	}
	out = append(out, added[i:]...)
	s.sorted = out
}

// Apply applies changes atomically, each applied change under its own new
// resourceVersion, in the order of changes.
//
// A put whose content (everything but metadata resourceVersion,
// creationTimestamp and uid) equals the stored object is a no-op; so is the
// delete of a missing key. Applied objects get metadata.resourceVersion = their
// new rv, a creationTimestamp (kept from the stored object, else now) and a
// stable uid; watchers get ADDED / MODIFIED / DELETED. When a key appears
// several times, the last change wins.
//
// Apply returns the store's new resourceVersion, that of its last applied
// change (unchanged if nothing applied), and the objects as stored (for
// deletions, the last state with its new rv). The
// objects passed in are not modified; the store keeps a shallow copy of each
// (its own metadata, everything else shared), so callers must not modify them
// afterwards either.
func (s *Store[T]) Apply(changes []Change[T]) (uint64, []T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := &batch[T]{rv: s.rv}
	for _, c := range s.lastPerKey(changes) {
		s.applyLocked(b, c)
	}
	if len(b.events) == 0 {
		return s.rv, nil
	}
	s.commitLocked(b)
	return s.rv, b.applied
}

// batch is what one Apply changes: its events and the objects as stored, in
// order, and the keys it adds and removes.
type batch[T Object] struct {
	rv      uint64 // the resourceVersion of the last event so far
	events  []event[T]
	applied []T
	added   []string
	removed map[string]bool
}

// next is the resourceVersion of the batch's next event. Every event gets
// its own, as every write does in etcd: a client whose watch broke after
// some events of this batch resumes from the last one it saw and must still
// get the rest.
func (b *batch[T]) next() (uint64, string) {
	b.rv++
	return b.rv, resourceversion.Format(b.rv)
}

// lastPerKey keeps the last change of each key, in the order of the keys'
// first appearance.
func (s *Store[T]) lastPerKey(changes []Change[T]) []Change[T] {
	idx := map[string]int{}
	var dedup []Change[T]
	for _, c := range changes {
		k, _ := s.key(c.Namespace, c.Name)
		if i, ok := idx[k]; ok {
			dedup[i] = c
			continue
		}
		idx[k] = len(dedup)
		dedup = append(dedup, c)
	}
	return dedup
}

// applyLocked applies one change to the objects and records it in b, unless
// it changes nothing.
func (s *Store[T]) applyLocked(b *batch[T], c Change[T]) {
	var deleted T // the zero T, a nil pointer: Change.Object of a delete
	k, ns := s.key(c.Namespace, c.Name)
	old, exists := s.objects[k]
	if c.Object == deleted {
		if exists {
			s.deleteLocked(b, k, ns, old)
		}
		return
	}
	s.putLocked(b, c, k, ns, old, exists)
}

// deleteLocked removes key k; the event carries its last state under the new
// resourceVersion.
func (s *Store[T]) deleteLocked(b *batch[T], k, ns string, old T) {
	last := shallow(old)
	rv, rvs := b.next()
	last.SetResourceVersion(rvs)
	delete(s.objects, k)
	if b.removed == nil {
		b.removed = map[string]bool{}
	}
	b.removed[k] = true
	b.events = append(b.events, event[T]{rv: rv, namespace: ns, typ: watch.Deleted, obj: last})
	b.applied = append(b.applied, last)
}

// putLocked stores a copy of c's object under key k, keeping the
// creationTimestamp and uid of the object it replaces; an object of the same
// content as the stored one changes nothing.
func (s *Store[T]) putLocked(b *batch[T], c Change[T], k, ns string, old T, exists bool) {
	obj := shallow(c.Object)
	obj.SetNamespace(ns)
	obj.SetName(c.Name)
	if exists && sameContent(old, obj) {
		return
	}
	rv, rvs := b.next()
	obj.SetResourceVersion(rvs)
	typ := watch.Added
	if exists {
		typ = watch.Modified
		obj.SetCreationTimestamp(old.GetCreationTimestamp())
		obj.SetUID(old.GetUID())
	} else {
		obj.SetCreationTimestamp(metav1.NewTime(s.opts.Now().UTC().Truncate(time.Second)))
		obj.SetUID(s.uid(ns, c.Name, obj.GetCreationTimestamp()))
		b.added = append(b.added, k) // once: changes are deduplicated by key
	}
	s.objects[k] = obj
	b.events = append(b.events, event[T]{rv: rv, namespace: ns, typ: typ, obj: obj})
	b.applied = append(b.applied, obj)
}

// commitLocked makes b's events the store's: its sorted keys, its
// resourceVersion, its history, and what every watcher is sent.
func (s *Store[T]) commitLocked(b *batch[T]) {
	s.updateSortedLocked(b.added, b.removed)
	s.rv = b.rv
	s.history = append(s.history, b.events...)
	s.trimLocked()
	for w := range s.watchers {
		w.push(b.events)
	}
}

// trimLocked drops the oldest events until the history fits HistorySize.
func (s *Store[T]) trimLocked() {
	if len(s.history) <= s.opts.HistorySize {
		return
	}
	cut := len(s.history) - s.opts.HistorySize
	s.minRV = s.history[cut-1].rv // every event has its own rv (Apply)
	s.history = append([]event[T](nil), s.history[cut:]...)
}

// uid is a deterministic uid, so that replicas computing the same object at
// the same second agree, and a re-created object gets a new one.
func (s *Store[T]) uid(namespace, name string, created metav1.Time) types.UID {
	h := sha1.Sum([]byte(s.opts.Resource.String() + "\x00" + namespace + "\x00" + name + "\x00" + created.UTC().Format(time.RFC3339)))
	h[6] = (h[6] & 0x0f) | 0x50 // version 5
	h[8] = (h[8] & 0x3f) | 0x80 // RFC 4122 variant
	return types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16]))
}

// Get returns the object, or a NotFound error (registry.Backend).
func (s *Store[T]) Get(_ context.Context, namespace, name string) (T, error) {
	k, _ := s.key(namespace, name)
	s.mu.RLock()
	o, ok := s.objects[k]
	s.mu.RUnlock()
	if !ok {
		var none T
		return none, apierrors.NewNotFound(s.opts.Resource, name)
	}
	return o, nil
}

// List returns the objects of one namespace ("" = all), sorted, and the
// current resourceVersion (registry.Backend).
func (s *Store[T]) List(_ context.Context, namespace string) ([]T, uint64, error) {
	if !s.opts.Namespaced {
		namespace = ""
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.sortedLocked(namespace), s.rv, nil
}

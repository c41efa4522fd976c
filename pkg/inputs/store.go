package inputs

import (
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// objectStore is an informer's record of the objects it delivered to the
// sink. The engine parses every object it gets in Sink.Upsert into its own
// representation and never asks the informer for it again, so for most kinds
// the store keeps only the object's key (namespace/name) and group/kind: what
// stopping an informer (Delete of each object), replacing it by one of
// another version and a relist (Delete of the objects that vanished) need.
// Only the CRD informer keeps whole (trimmed) objects: reconcile reads their
// spec back.
type objectStore struct {
	keepObjects bool

	mu    sync.RWMutex
	items map[string]storeEntry
	// gks interns the entries' group/kinds (one per informer in practice).
	gks []*schema.GroupKind
}

// storeEntry is what the store holds per object: 16 bytes besides the key.
type storeEntry struct {
	gk  *schema.GroupKind
	obj *unstructured.Unstructured // only with keepObjects
}

// objectRef names a stored object.
type objectRef struct {
	GroupKind       schema.GroupKind
	Namespace, Name string
}

func newObjectStore(keepObjects bool) *objectStore {
	return &objectStore{keepObjects: keepObjects, items: map[string]storeEntry{}}
}

// put records the object u of group/kind gk under key.
func (s *objectStore) put(key string, gk schema.GroupKind, u *unstructured.Unstructured) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := storeEntry{gk: s.internLocked(gk)}
	if s.keepObjects {
		e.obj = u
	}
	s.items[key] = e
}

func (s *objectStore) internLocked(gk schema.GroupKind) *schema.GroupKind {
	for _, p := range s.gks {
		if *p == gk {
			return p
		}
	}
	p := &gk
	s.gks = append(s.gks, p)
	return p
}

// remove forgets key and returns the group/kind it was stored with.
func (s *objectStore) remove(key string) (schema.GroupKind, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.items[key]
	if !ok {
		return schema.GroupKind{}, false
	}
	delete(s.items, key)
	return *e.gk, true
}

func (s *objectStore) has(key string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.items[key]
	return ok
}

func (s *objectStore) len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.items)
}

// keys returns the stored keys, sorted.
func (s *objectStore) keys() []string {
	s.mu.RLock()
	out := make([]string, 0, len(s.items))
	for k := range s.items {
		out = append(out, k)
	}
	s.mu.RUnlock()
	sort.Strings(out)
	return out
}

// refs returns the stored objects' names, sorted by key.
func (s *objectStore) refs() []objectRef {
	s.mu.RLock()
	defer s.mu.RUnlock()
	keys := make([]string, 0, len(s.items))
	for k := range s.items {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]objectRef, len(keys))
	for i, k := range keys {
		ns, name := splitKey(k)
		out[i] = objectRef{GroupKind: *s.items[k].gk, Namespace: ns, Name: name}
	}
	return out
}

// objects returns the stored objects (only with keepObjects), sorted by key.
func (s *objectStore) objects() []*unstructured.Unstructured {
	s.mu.RLock()
	defer s.mu.RUnlock()
	keys := make([]string, 0, len(s.items))
	for k, e := range s.items {
		if e.obj != nil {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := make([]*unstructured.Unstructured, len(keys))
	for i, k := range keys {
		out[i] = s.items[k].obj
	}
	return out
}

// splitKey splits a cache.MetaNamespaceKeyFunc key ("namespace/name" or
// "name"); the parts share the key's bytes.
func splitKey(key string) (namespace, name string) {
	if i := strings.IndexByte(key, '/'); i >= 0 {
		return key[:i], key[i+1:]
	}
	return "", key
}

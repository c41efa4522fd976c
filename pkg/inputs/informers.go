package inputs

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// Sink receives every input event. The live layer implements it on top of
// the computation engine.
type Sink interface {
	// Upsert is called for every added or updated object (already trimmed).
	Upsert(obj *unstructured.Unstructured)
	// Delete is called for every deleted object, and for every object of a
	// kind whose informer is stopped.
	Delete(gk schema.GroupKind, namespace, name string)
	// PolicyResources returns the policy kinds known now (from the CRDs
	// fed through Upsert); the Manager keeps one informer running per entry.
	PolicyResources() []schema.GroupVersionResource
}

// GatewayAPIGroup is the group of the Gateway API kinds the engine reads.
const GatewayAPIGroup = "gateway.networking.k8s.io"

// GatewayAPIKinds are the Gateway API kinds whose informers are started when
// (and as long as) the cluster has their CRDs.
var GatewayAPIKinds = []string{
	"GatewayClass", "Gateway", "ListenerSet",
	"HTTPRoute", "GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute",
	"ReferenceGrant",
}

// Static inputs, always watched.
var (
	CRDResource       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	NamespaceResource = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	ServiceResource   = schema.GroupVersionResource{Version: "v1", Resource: "services"}
)

var staticKinds = map[schema.GroupVersionResource]string{
	CRDResource:       "CustomResourceDefinition",
	NamespaceResource: "Namespace",
	ServiceResource:   "Service",
}

// Manager runs the input informers. It starts and stops the Gateway API and
// policy informers as CRDs come and go.
type Manager struct {
	client dynamic.Interface
	sink   Sink

	// syncTimeout bounds how long an informer started from a CRD may keep
	// HasSynced false (see HasSynced).
	syncTimeout time.Duration

	mu      sync.Mutex
	ctx     context.Context // set by Run
	static  map[schema.GroupResource]*handle
	dynamic map[schema.GroupResource]*handle
	crds    *objectStore
}

// handle is one running informer: a client-go reflector feeding a RealFIFO
// (as a shared informer's, in order, with the same transform) whose deltas
// process hands to the sink, recording in objs what it delivered. Unlike a
// shared informer's indexer, objs does not keep the objects (see
// objectStore).
type handle struct {
	gvr  schema.GroupVersionResource
	kind string
	objs *objectStore
	// synced is closed once the initial list has been delivered to the sink.
	synced <-chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	start  time.Time
	// lastErr is the last list/watch error of the informer.
	lastErr atomic.Pointer[error]

	// mu serializes event delivery with stop, so that no event of a stopped
	// informer reaches the sink after its objects were deleted.
	mu      sync.Mutex
	stopped bool
}

// DefaultSyncTimeout is the default of SetSyncTimeout.
const DefaultSyncTimeout = time.Minute

// NewManager returns a Manager reading through client and writing to sink.
func NewManager(client dynamic.Interface, sink Sink) *Manager {
	return &Manager{
		client:      client,
		sink:        sink,
		syncTimeout: DefaultSyncTimeout,
		static:      map[schema.GroupResource]*handle{},
		dynamic:     map[schema.GroupResource]*handle{},
	}
}

// Run starts the static informers (CRDs, Namespaces, Services); the CRD
// events start the others. It blocks until ctx is done.
func (m *Manager) Run(ctx context.Context) {
	m.mu.Lock()
	m.ctx = ctx
	gvrs := make([]schema.GroupVersionResource, 0, len(staticKinds))
	for gvr := range staticKinds {
		gvrs = append(gvrs, gvr)
	}
	sort.Slice(gvrs, func(i, j int) bool { return gvrs[i].String() < gvrs[j].String() })
	for _, gvr := range gvrs {
		h := m.startLocked(gvr, staticKinds[gvr], gvr == CRDResource, false)
		m.static[gvr.GroupResource()] = h
		if gvr == CRDResource {
			m.crds = h.objs
		}
	}
	m.mu.Unlock()
	<-ctx.Done()
}

// SetSyncTimeout sets how long HasSynced waits for an informer started from a
// CRD. Call it before Run.
func (m *Manager) SetSyncTimeout(d time.Duration) { m.syncTimeout = d }

// HasSynced reports whether every informer started so far, including those
// started for the CRDs of the initial list, has delivered its initial list.
// An informer started from a CRD that cannot list its kind (403 Forbidden:
// the server was not granted read access; 404: the kind went away) or that
// has not synced within the sync timeout does not hold HasSynced back: one
// kind the server may not read must not keep it unready. Such informers keep
// retrying; Failing names them.
func (m *Manager) HasSynced() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.static) == 0 {
		return false
	}
	for _, h := range m.static {
		if !h.hasSynced() {
			return false
		}
	}
	for _, h := range m.dynamic {
		if !h.hasSynced() && !h.givenUp(m.syncTimeout) {
			return false
		}
	}
	return true
}

// hasSynced reports whether the informer delivered its initial list. It
// does not wait for the FIFO's lock, which may be held while an event is
// processed (reconcile, called there, takes m.mu, held by the callers).
func (h *handle) hasSynced() bool {
	select {
	case <-h.synced:
		return true
	default:
		return false
	}
}

func (h *handle) givenUp(timeout time.Duration) bool {
	if p := h.lastErr.Load(); p != nil && (apierrors.IsForbidden(*p) || apierrors.IsNotFound(*p)) {
		return true
	}
	return timeout > 0 && time.Since(h.start) > timeout
}

// Failing lists the informers that have not synced, with their last error.
func (m *Manager) Failing() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	for _, hs := range []map[schema.GroupResource]*handle{m.static, m.dynamic} {
		for _, h := range hs {
			if h.hasSynced() {
				continue
			}
			msg := "not synced yet"
			if p := h.lastErr.Load(); p != nil {
				msg = (*p).Error()
			}
			out[h.gvr.String()] = msg
		}
	}
	return out
}

// WaitForSync blocks until HasSynced or ctx is done, logging the informers
// that are still syncing every so often.
func (m *Manager) WaitForSync(ctx context.Context) bool {
	last := time.Now()
	err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
		if m.HasSynced() {
			return true, nil
		}
		if time.Since(last) > 10*time.Second {
			last = time.Now()
			klog.InfoS("Waiting for input informers to sync", "pending", m.Failing())
		}
		return false, nil
	})
	return err == nil
}

// Pending lists the informers that have not delivered their initial list.
func (m *Manager) Pending() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, hs := range []map[schema.GroupResource]*handle{m.static, m.dynamic} {
		for _, h := range hs {
			if !h.hasSynced() {
				out = append(out, h.gvr.String())
			}
		}
	}
	sort.Strings(out)
	return out
}

// Running returns the resources of the informers started from CRDs (Gateway
// API kinds and policy kinds), sorted.
func (m *Manager) Running() []schema.GroupVersionResource {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]schema.GroupVersionResource, 0, len(m.dynamic))
	for _, h := range m.dynamic {
		out = append(out, h.gvr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// process hands the deltas the FIFO popped to the sink, in order, and records
// in h.objs what it delivered. For a relist (ReplacedAll), it deletes the
// objects the list lacks, then upserts the listed ones, as a shared informer
// notifies its handlers. A periodic resync (SyncAll) cannot happen: the
// resync period is 0.
func (m *Manager) process(h *handle, obj interface{}, isCRD bool) error {
	deltas, ok := obj.(cache.Deltas)
	if !ok {
		return fmt.Errorf("informer %s: popped %T, not Deltas", h.gvr, obj)
	}
	changed := false
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return nil
	}
	for _, d := range deltas {
		switch d.Type {
		case cache.Added, cache.Updated, cache.Replaced, cache.Sync:
			changed = m.upsertLocked(h, d.Object) || changed
		case cache.Deleted:
			changed = m.deleteLocked(h, d.Object) || changed
		case cache.ReplacedAll:
			info, ok := d.Object.(cache.ReplacedAllInfo)
			if !ok {
				continue
			}
			changed = m.replaceAllLocked(h, info.Objects) || changed
		}
	}
	h.mu.Unlock()
	if isCRD && changed {
		m.reconcile()
	}
	return nil
}

func (m *Manager) upsertLocked(h *handle, obj interface{}) bool {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return false
	}
	key, err := cache.MetaNamespaceKeyFunc(u)
	if err != nil {
		return false
	}
	h.objs.put(key, h.groupKind(u), u)
	m.sink.Upsert(u)
	return true
}

func (m *Manager) deleteLocked(h *handle, obj interface{}) bool {
	var key string
	var gk schema.GroupKind
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		k, err := cache.MetaNamespaceKeyFunc(o)
		if err != nil {
			return false
		}
		key, gk = k, h.groupKind(o)
	case cache.DeletedFinalStateUnknown:
		// Not produced with AtomicEvents (relists come as ReplacedAll), but
		// a tombstone is a delete all the same.
		key = o.Key
		if u, ok := o.Obj.(*unstructured.Unstructured); ok {
			gk = h.groupKind(u)
		} else {
			gk = schema.GroupKind{Group: h.gvr.Group, Kind: h.kind}
		}
	default:
		return false
	}
	if stored, ok := h.objs.remove(key); ok {
		gk = stored
	}
	ns, name := splitKey(key)
	m.sink.Delete(gk, ns, name)
	return true
}

func (m *Manager) replaceAllLocked(h *handle, objs []interface{}) bool {
	changed := false
	// The initial list (nothing stored yet) has nothing to delete.
	if h.objs.len() > 0 {
		changed = m.deleteUnlistedLocked(h, objs)
	}
	for _, obj := range objs {
		changed = m.upsertLocked(h, obj) || changed
	}
	return changed
}

// deleteUnlistedLocked deletes the stored objects a relist lacks, as a
// shared informer's DeletedFinalStateUnknown tombstones would.
func (m *Manager) deleteUnlistedLocked(h *handle, objs []interface{}) bool {
	listed := make(map[string]struct{}, len(objs))
	for _, obj := range objs {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			listed[key] = struct{}{}
		}
	}
	changed := false
	for _, key := range h.objs.keys() {
		if _, ok := listed[key]; ok {
			continue
		}
		if gk, ok := h.objs.remove(key); ok {
			ns, name := splitKey(key)
			m.sink.Delete(gk, ns, name)
			changed = true
		}
	}
	return changed
}

func (h *handle) groupKind(u *unstructured.Unstructured) schema.GroupKind {
	gk := u.GroupVersionKind().GroupKind()
	if gk.Kind == "" {
		gk = schema.GroupKind{Group: h.gvr.Group, Kind: h.kind}
	}
	return gk
}

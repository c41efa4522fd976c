package inputs

// Which informers run: reconcile starts and stops the CRD-driven informers (the Gateway API
// kinds and the policy kinds) as CRDs and the engine's policy kinds come and go; when an
// informer is replaced, the objects only the old one had delivered are deleted once the new
// one has synced.

import (
	"context"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

func (m *Manager) startLocked(gvr schema.GroupVersionResource, kind string, isCRD, policy bool) *handle {
	ctx, cancel := context.WithCancel(m.ctx)
	h := &handle{gvr: gvr, kind: kind, objs: newObjectStore(isCRD), ctx: ctx, cancel: cancel, start: time.Now()}
	// The queue a shared informer uses (client-go 1.36 defaults: events in
	// order, a relist as one ReplacedAll delta), with the transform applied
	// as objects enter it.
	fifo := cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{
		Name:                  "RealFIFO " + gvr.String(),
		KeyFunction:           cache.MetaNamespaceKeyFunc,
		Transformer:           transformFor(gvr.GroupVersion().WithKind(kind), policy),
		AtomicEvents:          true,
		UnlockWhileProcessing: true,
	})
	client := m.client.Resource(gvr)
	ctl := cache.New(&cache.Config{
		Queue: fifo,
		// As dynamicinformer builds it.
		ListerWatcher: cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return client.List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return client.Watch(ctx, o)
			},
		}, m.client),
		ObjectType:        &unstructured.Unstructured{},
		ObjectDescription: gvr.String(),
		Process: func(obj interface{}, _ bool) error {
			return m.process(h, obj, isCRD)
		},
		WatchErrorHandlerWithContext: func(ctx context.Context, r *cache.Reflector, err error) {
			h.lastErr.Store(&err)
			cache.DefaultWatchErrorHandler(ctx, r, err)
		},
	})
	h.synced = ctl.HasSyncedChecker().Done()
	klog.V(2).InfoS("Starting informer", "resource", gvr)
	go ctl.RunWithContext(ctx)
	return h
}

// stop stops the informer and, with deleteObjects, deletes every object it
// had delivered.
func (m *Manager) stop(h *handle, deleteObjects bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopped = true
	h.cancel()
	if !deleteObjects {
		return
	}
	for _, r := range h.objs.refs() {
		m.sink.Delete(r.GroupKind, r.Namespace, r.Name)
	}
	klog.V(2).InfoS("Stopped informer", "resource", h.gvr)
}

type wanted struct {
	gvr    schema.GroupVersionResource
	kind   string
	policy bool
}

// reconcile brings the CRD-driven informers in line with the CRDs in the
// cache and the policy kinds the engine knows.
func (m *Manager) reconcile() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.crds == nil || m.ctx.Err() != nil {
		return
	}
	want := map[schema.GroupResource]wanted{}
	kinds := map[schema.GroupResource]string{}
	gatewayKinds := map[string]bool{}
	for _, k := range GatewayAPIKinds {
		gatewayKinds[k] = true
	}
	for _, u := range m.crds.objects() {
		group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
		plural, _, _ := unstructured.NestedString(u.Object, "spec", "names", "plural")
		if plural == "" {
			continue
		}
		gr := schema.GroupResource{Group: group, Resource: plural}
		kinds[gr] = kind
		if group == GatewayAPIGroup && gatewayKinds[kind] {
			if v := ServedVersion(u); v != "" {
				want[gr] = wanted{gvr: gr.WithVersion(v), kind: kind}
			}
		}
	}
	for _, gvr := range m.sink.PolicyResources() {
		gr := gvr.GroupResource()
		if _, static := m.static[gr]; static {
			continue
		}
		want[gr] = wanted{gvr: gvr, kind: kinds[gr], policy: true}
	}
	switched := map[schema.GroupResource]*handle{}
	for gr, h := range m.dynamic {
		w, ok := want[gr]
		switch {
		case !ok:
			m.stop(h, true)
			delete(m.dynamic, gr)
		case w.gvr != h.gvr:
			// Another version: the objects stay in the engine until the new
			// informer has listed them, so that their outputs do not flap.
			m.stop(h, false)
			delete(m.dynamic, gr)
			switched[gr] = h
		}
	}
	grs := make([]schema.GroupResource, 0, len(want))
	for gr := range want {
		grs = append(grs, gr)
	}
	sort.Slice(grs, func(i, j int) bool { return grs[i].String() < grs[j].String() })
	for _, gr := range grs {
		if _, ok := m.dynamic[gr]; !ok {
			w := want[gr]
			h := m.startLocked(w.gvr, w.kind, false, w.policy)
			m.dynamic[gr] = h
			if old := switched[gr]; old != nil {
				go m.replaced(old, h)
			}
		}
	}
}

// replaced deletes, once the new informer h has synced, the objects the
// stopped informer old had delivered and h did not list.
func (m *Manager) replaced(old, h *handle) {
	select {
	case <-h.synced:
	case <-h.ctx.Done():
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return
	}
	for _, r := range old.objs.refs() {
		if !h.objs.has(cache.ObjectName{Namespace: r.Namespace, Name: r.Name}.String()) {
			m.sink.Delete(r.GroupKind, r.Namespace, r.Name)
		}
	}
}

// ServedVersion picks the version to watch a CRD's kind in: the storage
// version when it is served, otherwise the first served version. It returns
// "" when no version is served.
func ServedVersion(crd *unstructured.Unstructured) string {
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	first := ""
	for _, v := range versions {
		vm, ok := v.(map[string]interface{})
		if !ok {
			continue
		}
		name, _ := vm["name"].(string)
		served, _ := vm["served"].(bool)
		storage, _ := vm["storage"].(bool)
		if !served || name == "" {
			continue
		}
		if storage {
			return name
		}
		if first == "" {
			first = name
		}
	}
	return first
}

func transformFor(gvk schema.GroupVersionKind, policy bool) cache.TransformFunc {
	if policy {
		return PolicyTransformFor(gvk)
	}
	return TransformFor(gvk)
}

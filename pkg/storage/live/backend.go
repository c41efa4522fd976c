package live

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/registry"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/versioned"
)

// Backend serves one resource from its versioned Store, bringing dirty
// outputs up to date first: Get recomputes the requested key when it is
// dirty, List recomputes every dirty key, Watch delegates (the worker applies
// dirty keys within the debounce interval). Before the first full
// computation it serves the Store as restored from the cache.
type Backend struct {
	l          *Live
	store      *versioned.Store
	namespaced bool
}

var _ registry.Backend = (*Backend)(nil)

// Get implements registry.Backend.
func (b *Backend) Get(ctx context.Context, namespace, name string) (runtime.Object, error) {
	if !b.namespaced {
		namespace = ""
	}
	if !b.namespaced || namespace != "" {
		b.l.flushKey(compute.Key{Namespace: namespace, Name: name})
	}
	return b.store.Get(ctx, namespace, name)
}

// List implements registry.Backend.
func (b *Backend) List(ctx context.Context, namespace string) ([]runtime.Object, uint64, error) {
	b.l.flushAll()
	return b.store.List(ctx, namespace)
}

// Watch implements registry.Backend.
func (b *Backend) Watch(ctx context.Context, namespace string, rv uint64) (watch.Interface, error) {
	return b.store.Watch(ctx, namespace, rv)
}

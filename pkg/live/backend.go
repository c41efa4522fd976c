package live

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/access"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/registry"
)

// Backend serves one resource from its versioned Store. Reads never
// compute or write: Get and List first wait (within the request's deadline)
// until the worker has applied every change that was pending when they
// arrived, so a client sees its own edits; Watch delegates (the worker
// applies dirty keys within the debounce interval). Before the first full
// computation it serves the Store as restored from the cache.
type Backend struct {
	l          *Live
	store      *outputStore
	namespaced bool
	// reach: the store holds policy reaches, which are built after the
	// first computation; reads wait for them (awaitReaches).
	reach bool
}

// The live layer hands these to the REST layer; the storage does not import
// it, so the fit is checked here (docs/storage.md, "Layering").
var (
	_ registry.Backend      = (*Backend)(nil)
	_ registry.EpochBackend = (*Backend)(nil)
	_ registry.Backend      = (*outputStore)(nil)
	_ registry.EpochBackend = (*outputStore)(nil)
)

// ForeignResourceVersion implements registry.EpochBackend.
func (b *Backend) ForeignResourceVersion(rv uint64) bool {
	return b.store.ForeignResourceVersion(rv)
}

// Get implements registry.Backend.
func (b *Backend) Get(ctx context.Context, namespace, name string) (*encoded.Object, error) {
	if !b.namespaced {
		namespace = ""
	}
	if err := b.await(ctx); err != nil {
		return nil, err
	}
	return b.store.Get(ctx, namespace, name)
}

// List implements registry.Backend.
func (b *Backend) List(ctx context.Context, namespace string) ([]*encoded.Object, uint64, error) {
	if err := b.await(ctx); err != nil {
		return nil, 0, err
	}
	return b.store.List(ctx, namespace)
}

// await makes a read see every change pending when it arrived
// (awaitApplied), and a reach read the reaches of the first computation.
func (b *Backend) await(ctx context.Context) error {
	if b.reach {
		if err := b.l.awaitReaches(ctx); err != nil {
			return err
		}
	}
	return b.l.awaitApplied(ctx)
}

// Watch implements registry.Backend.
func (b *Backend) Watch(ctx context.Context, namespace string, rv uint64) (watch.Interface, error) {
	return b.store.Watch(ctx, namespace, rv)
}

// SensitiveFields exposes the engine's sensitive-field index (descriptor
// sensitiveFields, resources from the CRDs) to the REST layer, which redacts
// those values for callers that may not get the policy kind.
func (l *Live) SensitiveFields() access.SensitiveFields { return sensitiveIndex{l.engine} }

type sensitiveIndex struct{ engine Engine }

func (s sensitiveIndex) SensitiveKind(gk schema.GroupKind) (access.SensitiveKind, bool) {
	sk, ok := s.engine.SensitiveKind(gk)
	if !ok {
		return access.SensitiveKind{}, false
	}
	return access.SensitiveKind{Resource: sk.Resource, Paths: sk.Paths}, true
}

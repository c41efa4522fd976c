// Package live connects the computation engine (pkg/compute) to a live
// cluster and to the API: informers (pkg/inputs) feed the engine, a
// background worker recomputes the outputs the engine reports as possibly
// changed, encodes them (pkg/encoded), applies them to the two versioned
// Stores (pkg/storage/versioned, which serve Get, List and Watch) and
// persists them in a bbolt cache (pkg/storage/cache).
//
// The name says what the package keeps: the outputs live, computed from the
// running cluster and brought up to date as it changes, where pkg/compute is
// the pure computation and pkg/storage keeps what it is given. The docs call
// it "the live layer". It is not called "controller": it writes nothing to
// the cluster, and a Kubernetes controller is something that does.
//
// It is wiring, above both the storage and the REST layer (docs/storage.md,
// "Layering"): its Backends wrap versioned Stores for pkg/registry, and the
// compiler checks here that both fit registry.Backend; the storage packages
// themselves do not import the registry.
package live

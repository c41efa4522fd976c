// Package live connects the computation engine (pkg/compute) to a live
// cluster and to the API: informers (pkg/inputs) feed the engine, a
// background worker recomputes the outputs the engine reports as possibly
// changed, encodes them (pkg/encoded), rebuilds the policy reaches read off
// them (pkg/reach), applies both to the four versioned Stores
// (pkg/storage/versioned: effectivepolicies, clustereffectivepolicies,
// policyreaches, clusterpolicyreaches, which serve Get, List and Watch)
// and persists them in a bbolt cache (pkg/storage/cache). It also answers
// RequestTraces (the engine's topology, once the outputs are current) and
// EffectivePolicyReviews (the engine's WhatIf), which touch no Store.
//
// Live runs the start-up and the worker and composes one part per job,
// each in its own file: dirtyQueue (dirty.go) holds the keys the engine
// reports as possibly changed, with the generation reads wait for; outputs
// (outputs.go) computes, applies and persists the effective policies;
// reaches (reaches.go) builds, applies and persists the policy reaches;
// persistence (cachefile.go) restores the Stores from the cache file,
// writes to it, and retries and adopts a file it could not open at
// start-up; Answers (answers.go) serves traces and reviews. The Backends
// (backend.go) serve the Stores to the REST layer.
//
// It uses the engine through one interface, Engine, which *compute.Engine
// satisfies and the compiler checks: a request never finds the engine
// lacking a method.
//
// The name says what the package keeps: the outputs live, computed from the
// running cluster and brought up to date as it changes, where pkg/compute is
// the pure computation and pkg/storage keeps what it is given. The docs call
// it "the live layer". It is not called "controller": it writes nothing to
// the cluster, and a Kubernetes controller is something that does.
//
// It is wiring, above both the storage and the REST layer (docs/storage.md,
// "Layering"): its Backends wrap versioned Stores for pkg/registry, and the
// compiler checks here that both fit registry.Backend (and that Answers is
// a registry.TraceSource and a review.Source); the storage packages
// themselves do not import the registry.
package live

// Package fold computes the engine's outputs (docs/spec.md §5): for a
// target and a policy kind, the contexts (the distinct vias of the paths
// from a root to the target), the fold of each context's entries into the
// effective spec with the provenance of every field, how each source fared
// (Enforced, PartiallyEnforced, Overridden, Conflicted, Invalid) and why,
// and the EffectivePolicy or ClusterEffectivePolicy that holds them. What
// it computes is kept in a Memo that concurrent computations share and
// that stays valid across mutations as far as the engine's generations
// and the attachment generations of its nodes say.
//
// It is separate because it only reads: the topology graph, and the
// attachments per kind and node (pkg/compute/attach) with the profiles
// that merge them (pkg/compute/semantics). It never mutates them, holds
// no lock of its own over them, and knows nothing of how inputs are
// applied; the engine calls it under its read lock with a Session, and
// hands it the generations and sizes its Memo depends on.
package fold

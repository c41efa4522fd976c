// Package attach decides where policies attach (docs/spec.md §3): each
// parsed policy's targetRefs, sectionNames and label selectors resolved to
// attachment nodes of the topology graph — existing objects or sections,
// virtual targets for kinds the cluster does not serve, objects its
// selectors pick — with the rules on crossing namespaces (a ReferenceGrant,
// else Invalid at that target). It keeps the indexes the rest of the engine
// reads: per policy kind the valid attachments by node with their
// attachment generations, the sections bearing policies and the Invalid
// listings; and the policies to re-resolve when an object, a Namespace's
// labels or a ReferenceGrant changes.
//
// It is separate because attaching depends only on the graph, the labels of
// its objects and the parsed policies, never on how a target's policies are
// folded; the fold reads what it indexes, and the engine's state, which
// owns the generations of its memo and the output keys, holds one Index
// and tells it what changed.
package attach

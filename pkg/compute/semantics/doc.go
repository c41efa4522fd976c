// Package semantics is the seam between the engine and the implementations
// whose rules it reproduces (docs/spec.md §4.1): the Profile interface, which decides
// everything an implementation decides (how a stanza merges, which entries
// of a context count, which of several Direct policies take effect, where a
// kind takes effect at all), and its inputs: a parsed Policy and its Entry
// stanzas, and the FoldEntry of one context. Each implementation lives in a
// folder of its own below this one (gep, the default, and envoygateway,
// kuadrant, nginx), importing only this package, the merge and the node
// names, so adding an implementation is adding a folder and naming it in
// the engine's table of profiles; the rest of the engine (contexts, via,
// fieldSources, outcomes) is the same for every profile.
package semantics

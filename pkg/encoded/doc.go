// Package encoded holds the form in which the server keeps its outputs: an
// EffectivePolicy or ClusterEffectivePolicy as its metadata plus the
// compressed (S2, klauspost/compress) JSON of its targets, and serves them
// without re-encoding.
//
// Why: at the large benchmark size the outputs are tens of thousands of
// objects of several KB of JSON each. Held as Go objects they were a large
// share of the heap, and every GET, LIST, watch event and cache write encoded
// them again with encoding/json, the slowest step of a LIST. Held compressed
// they take a fraction of that, are encoded once when they change, and a LIST
// costs an S2 decode per object. S2 rather than zstd: on these outputs zstd
// compresses better but encodes and decodes about twice as slowly, and
// encoding is on the path from a policy edit to its watch events
// (docs/storage.md and docs/benchmarks/README.md have the measurements).
//
// *Object and *List implement runtime.CacheableObject: the API machinery's
// JSON encoder hands them its identifier, and for the identifier of plain
// (not pretty, not YAML) JSON of effectivepolicy.dev/v1alpha1 they write
// their bytes directly; for every other encoder they hand over the decoded
// Go object (GetObject), so every other path works as before, only slower.
// The bytes are those encoding/json writes for the decoded object (tests
// compare them).
//
// It is a package of its own, directly under pkg/, because it is the form
// the layers share rather than a kind of storage: pkg/live builds Objects,
// pkg/storage keeps and compares them (Equal) and writes their cache form
// (CacheBytes, versioned by CacheFormat), pkg/registry serves them. It
// depends only on the API types and internal helpers, so every one of those
// may import it.
package encoded

// Package compute computes EffectivePolicy and ClusterEffectivePolicy objects
// (docs/spec.md §3–§6) from Gateway API topology objects, policy CRDs and
// policies. It is a pure library: no clients, no I/O, no goroutines except
// ComputeAll's workers (GOMAXPROCS, for the duration of the call).
//
// # Inputs
//
// An Engine is fed unstructured objects of any served version through Upsert
// and Delete: CustomResourceDefinitions (which tell policy kinds and served
// kinds), Namespaces, Services, GatewayClasses, Gateways, ListenerSets, the
// five route kinds, ReferenceGrants, and objects of the policy kinds. A CRD
// is a policy kind when a Descriptor names its group/kind (built-ins, see
// BuiltinDescriptors, plus Options.Descriptors, which win) or, failing that,
// when it carries the gateway.networking.k8s.io/policy label, or, without the
// label, when its schema has GEP-713 targetRef(s) (policies.SchemaClass; docs/spec.md §4).
//
// # The hierarchy
//
// The engine keeps a graph (topology.Graph) of object nodes and section
// nodes (listeners, named route rules, named Service ports):
//
//	GatewayClass > Gateway > [ListenerSet >] Listener > Route > RouteRule > Backend > Port
//	Service > [Port >] Route > RouteRule > Backend > Port   (mesh routes, GAMMA)
//
// Parents are derived on demand from indexes: a route's parents are the
// listeners that admit it (parentRef name/sectionName/port, allowedRoutes
// namespaces and kinds, hostnames) or the Service (port) a mesh parentRef
// selects, a backend's parents the rules that reference it by backendRefs
// or RequestMirror filters, where a ReferenceGrant allows it and the
// backend is not the rule's own mesh Service. A mesh route's Service starts
// its path (meshFrontContexts), so the graph has no cycle. Namespace nodes are not part of the graph: while walking a path
// downwards, the Namespace of an object is inserted right above it when no
// object of that namespace came before on the path. Objects without parents
// start a path of their own (Namespace > object).
//
// # Attachments
//
// Each policy is parsed once (targets, stanzas, strategies; malformed
// policies become Invalid with a message; pkg/compute/policies) and
// resolved to attachment nodes (pkg/compute/attach): existing objects or
// sections, virtual targets for kinds the cluster does not serve,
// label-selected objects of its namespace. A cross-namespace
// target needs a ReferenceGrant, else the policy is listed as Invalid at
// that target. Attachments are indexed per policy kind and node, and the
// indexes are updated incrementally: a topology change re-resolves only the
// policies that name or select the changed object (or, for a ReferenceGrant,
// that point into its namespace).
//
// # Contexts and the fold
//
// For a target T and a policy kind K, the contexts are the paths from a root
// to T (pkg/compute/fold computes them, folds them and builds the outputs). Only the nodes that bear a policy of K matter, so the engine
// computes, by memoised dynamic programming over parents, the distinct
// "vias": the sequences of policy-bearing nodes along those paths. Contexts
// with equal vias are reported once (docs/spec.md §5.5). For each via, the entries
// (one per policy stanza) are ordered established first — less specific
// node first; at one node older creationTimestamp first, then
// namespace/name; overrides before defaults within one policy — and folded
// from the most specific upwards: acc starts as the last entry's spec, and
// each established entry applies its own strategy (AtomicDefaults keeps acc
// unless empty, AtomicOverrides replaces it, PatchDefaults patches the entry
// with acc, PatchOverrides patches acc with the entry). Patches are RFC 7386
// merge patches, except that lists the CRD schema marks
// x-kubernetes-list-type: map are merged item by item on their keys.
//
// Every value carries provenance: each leaf (scalar, list, empty object)
// remembers the entry that set it, so fieldSources and the outcomes
// (Enforced, PartiallyEnforced, Overridden) fall out of the fold; the
// message names the policies whose leaves survived instead. Direct kinds
// skip the fold: among the policies attached to T (or to one of its
// sections, which beats the whole object for that section) the established
// one wins whole and the others are Conflicted.
//
// # Incremental use
//
// Upsert and Delete return the keys whose output may have changed: for a
// policy, the keys of the subtrees below its old and new attachment points;
// for a topology object, its subtree before and after the change. In bulk
// mode (SetBulk, for feeding a whole cluster at start-up) they skip that
// bookkeeping. Compute works on demand and keeps a memo between calls:
// contexts until the next structural mutation (one that may change graph
// edges or attachment points); folds, and the order of the policies at a
// node, as long as the attachment generation of their nodes is unchanged —
// every attach or detach of a policy of kind K at node N gives (K, N) a new
// generation, so an edit of one policy refolds only the folds of its kind
// whose via contains its attachment points.
//
// # Concurrency and sharing
//
// Compute is safe for concurrent use and callers share one memo: its tables
// are split into shards with their own read-write locks and hold immutable
// values, so GOMAXPROCS goroutines computing a batch of keys share contexts
// and folds instead of redoing them (ComputeAll computes that way). Outputs
// share the spec bytes, fieldSources maps and via lists of their folds with
// each other and with the memo: they are read-only for callers. DropMemo
// releases the memo. The engine retains parsed compact structs of its
// inputs, topology specs in a compact canonical encoding (decoded only for
// request traces and reviews) with their fingerprints (SHA-256), and
// copies of policy specs.
//
// docs/compute.md holds the design notes, the decisions taken where docs/spec.md
// is silent, the descriptor mappings of the built-in policy kinds and
// benchmark numbers.
package compute

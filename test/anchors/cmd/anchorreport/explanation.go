package main

// explanation is the report's fixed part: what each side computes, where
// they agree (tested) and where they differ (by design of each).
const explanation = `## What each side computes

**Ours** (` + "`test/anchors/ours.go`" + `, as ` + "`test/scale`" + `'s BenchmarkFullComputation and the server's start-up):
` + "`compute.NewEngine`" + `, every generated object upserted in bulk mode (CRDs, Namespaces, the GatewayClass, Gateways,
Services, ReferenceGrants, routes, policies), ` + "`Keys()`" + `, then ` + "`Compute`" + ` of every key on GOMAXPROCS goroutines sharing
the engine's memo; the outputs are kept. Every object a policy reaches is a target (GatewayClass, Namespaces,
Gateways and their listeners, routes and their rules, Services and their ports), with, per policy kind, every
source's outcome and message and, per distinct context (via), the merged spec (RFC 7386, list-maps item by item) and
the policy of every leaf.

**policy-machinery** (` + "`test/anchors/convert.go`, `pm.go`, `policy.go`" + `), the way kuadrant-operator uses it:

1. The generated objects are converted with ` + "`runtime.DefaultUnstructuredConverter`" + ` into ` + "`gwapiv1.GatewayClass`" + `,
   ` + "`Gateway`, `HTTPRoute`" + ` (mesh routes too) and core/v1 ` + "`Service`" + ` (timed apart, not in the ratios: kuadrant-operator's
   informers hold typed objects). Policies become a small ` + "`machinery.Policy`" + ` type whose targetRefs are
   ` + "`machinery.LocalPolicyTargetReferenceWithSectionName`" + ` (sectionName kept), as kuadrant's RateLimitPolicy builds them.
2. ` + "`machinery.NewGatewayAPITopology(WithGatewayClasses, WithGateways, WithHTTPRoutes, WithServices,\n   WithGatewayAPITopologyPolicies, ExpandGatewayListeners, ExpandHTTPRouteRules, ExpandServicePorts)`" + `.
3. For each policy kind on a goroutine of its own (kuadrant-operator runs its effective-policy reconcilers as
   concurrent tasks of one ` + "`controller.Workflow`" + `, internal/controller/data_plane_policies_workflow.go), for each
   GatewayClass and each HTTPRouteRule targetable, ` + "`topology.Targetables().Paths(class, rule)`" + `, and for each path the
   policies of the kind attached along it (least specific first; at one targetable by creationTimestamp, then
   namespace/name) folded with ` + "`lo.ReduceRight(policies, effective.Merge(policy), last)`" + `, stored by path ID:
   internal/controller/effective_ratelimit_policies_reconciler.go (` + "`calculateEffectivePolicies`" + `) and api/v1/merge_strategies.go
   (` + "`EffectivePolicyForPath`, `PoliciesInPath`, `PathID`" + `) of kuadrant-operator. Only route rules are targets.

The policy type's ` + "`Merge`" + ` (` + "`test/anchors/policy.go`" + `) does kuadrant's merges on rules: a rule is a top-level field of a
stanza or one item of the kind's list-map, keyed by name (as a RateLimitPolicy's limits are keyed by name).
AtomicDefaults keeps the accumulated policy unless it has no rule, AtomicOverrides replaces it, PolicyRuleDefaults
adds the rules it lacks, PolicyRuleOverrides replaces the rules the source has; each rule remembers the policy it
comes from. The strategy is read as our engine reads it (a stanza's ` + "`strategy`" + ` field, then the spec's; ` + "`patch`" + ` is
kuadrant's ` + "`merge`" + `; a policy with both stanzas patches; otherwise atomic), and a policy with both stanzas, which
kuadrant's CRDs forbid, merges its defaults then its overrides, the order in which our fold applies them.

## Where they agree (tested)

` + "`TestSidesAgree`" + ` (test/anchors/agree_test.go) computes both sides on topologies at scales 0.0025 (four seeds) and 0.005
with one Gateway, and, run by hack/bench-anchors.sh before it measures, at 0.015 (two Gateways, routes with two
parents), with the Namespace-level policies left out (policy-machinery has no Namespace to attach them to). For
every route rule and policy kind, our contexts rooted at the GatewayClass and policy-machinery's paths from it (but
those through the internal listener, below) give the same set of vias (the policy-bearing nodes of the path), and
for each via the same merged spec (list items compared by name) and the same set of contributing policies; no
context is on one side only. It requires at least 100 contexts compared, some of them merging several policies;
a deliberately broken merge (PolicyRuleDefaults letting the source win) made it fail on 197 contexts.

## Where they differ (by design; ` + "`TestKnownDifferences`" + ` keeps this list true)

- **Namespace policies** (10 % of the generated policies): ours inserts a Namespace above the first object of that
  namespace on a path (docs/spec.md §3); policy-machinery's Gateway API topology has no Namespaces, so these policies
  attach nowhere.
- **Listener hostnames**: ours attaches a route through a listener only when their hostnames intersect;
  policy-machinery links a route to every listener of its parent Gateway (or the one its sectionName names),
  hostname or not, so it computes paths through the listener that serves ` + "`*.internal.bench.example`" + `, which no route
  shares.
- **Mesh (GAMMA) routes**: ours hangs a route whose parentRef is a Service under that Service (or port);
  policy-machinery links routes only to Gateways and listeners, so a mesh route hangs from nothing, and the paths
  from the GatewayClass to its rules are none (each query still searches the whole topology below the class).
- **ReferenceGrants**: ours hangs a backend in another namespace under a rule only where a grant allows it;
  policy-machinery links it regardless (this changes no rule context).
- **What is computed**: policy-machinery (as kuadrant-operator uses it) computes effective policies of route rules
  only, one per path (a route under all eight listeners of a Gateway has eight, usually equal); ours computes every
  target, one entry per distinct via, with outcomes, messages and per-leaf provenance. Ours does more work per run.
- **GatewayClass targets**: a policy-machinery target reference carries the policy's namespace, which never
  matches a cluster-scoped object; kuadrant's policies never target one, so the references to the GatewayClass
  get no namespace here (otherwise those policies would attach nowhere).

## Why policy-machinery takes so long here

` + "`Paths(from, to)`" + ` is a depth-first search over every simple path from the GatewayClass, with no pruning towards the
target: for each (kind, rule) query it walks everything below the class (Gateways, listeners, routes, rules,
Service ports), building each visited node's locator string with ` + "`fmt.Sprintf`" + ` (about half of its CPU time in a
profile at 250 routes). The number of queries and the size of each walk both grow with the number of routes, so
the time grows about with its square (4 to 6 times per doubling above), where ours grows about linearly.
kuadrant-operator's own comment on the loop anticipates it ("this may be expensive ... an alternative is to deep
search the topology ... keeping record of the paths"). Building the topology is
quadratic too (dot's ` + "`FindNodeById`" + ` is a linear scan per edge, the loop check walks every edge per node) but
small next to the queries at these sizes.

## Module versions

` + "`test/anchors`" + ` is its own module (` + "`replace`" + ` of this one to ` + "`../..`" + `), so policy-machinery and the typed Gateway API never
enter the product's go.mod. policy-machinery v0.9.0 (the version the Go module proxy serves) does not compile
against sigs.k8s.io/gateway-api v1.6.3 nor v1.3.0 (its ` + "`machinery`" + ` package uses ` + "`v1alpha2.BackendLBPolicy`" + `, removed in
v1.3.0, and, against v1.6.3, builds ` + "`v1alpha3.BackendTLSPolicy`" + ` target references of a type that changed), so the
module requires gateway-api v1.2.1, the version policy-machinery itself requires.
k8s.io/* stay at this project's v0.36.3. Minimal version selection raises some modules the root go.mod requires
above its versions, because policy-machinery's go.mod requires them
(golang.org/x/net v0.55.0, x/text v0.37.0, x/term v0.43.0, github.com/go-openapi/jsonreference v0.21.0) or what
those require (x/crypto v0.51.0, x/mod v0.35.0, x/tools v0.44.0); versions cannot go below what a dependency
requires. Every other module the root go.mod requires is at the root's version.
`

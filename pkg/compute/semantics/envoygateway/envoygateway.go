package envoygateway

// The Envoy Gateway profile (v1.9: BackendTrafficPolicy, SecurityPolicy, EnvoyExtensionPolicy,
// ClientTrafficPolicy), from github.com/envoyproxy/gateway v1.9.0:
//
//   - internal/gatewayapi/backendtrafficpolicy.go (securitypolicy.go and envoyextensionpolicy.go
//     alike): policies are processed route rule, route, ListenerSet listener, ListenerSet, Gateway
//     listener, Gateway (ProcessBackendTrafficPolicies); a route's settings are set once
//     (translateBackendTrafficPolicyForRoute, and for Gateway-side policies
//     translateBackendTrafficPolicyForListeners skips routes whose Traffic is already set), so on
//     HTTP and GRPC routes only the most specific level with a policy counts. A ListenerSet's
//     listeners are listeners of its parent Gateway (listenerset.go processListenerSet), so a
//     Gateway-wide policy reaches them; a Gateway listener policy never does (sectionName names
//     a Gateway's own listener: helpers.go gatewayPolicyTargetListeners).
//   - processBackendTrafficPolicyForRoute: a route (or rule) policy with mergeType is merged
//     (utils.Merge, the route policy patching the parent) onto the closest Gateway-side policy
//     only: through a Gateway listener the listener's, else the Gateway's; through a ListenerSet
//     listener the ListenerSet listener's, else the ListenerSet's, else the Gateway's (never a
//     Gateway listener's, a sibling). A rule policy never merges with the route policy.
//   - internal/utils/merge.go: JSONMerge is RFC 7386; StrategicMerge is
//     strategicpatch.StrategicMergePatch with the API types' tags (patchMergeKey, in
//     api/v1alpha1/*_types.go), which merge compression, compressor and httpUpgrade items by type
//     and extAuth.contextExtensions by name.
//   - resolveBackendTrafficPolicyGatewayTargetRef / ...ListenerSetTargetRef / ...RouteTargetRef
//     and the order of internal/gatewayapi/resource/resource.go (*Resources).Sort: of two
//     policies on one target the oldest (creationTimestamp, then namespace/name) applies, the
//     others are Conflicted.
//   - On TCP and UDP routes settings are set one by one if still unset: l4.go.
//   - Where each kind takes effect at all: reach.go.

import (
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// Profile is the Envoy Gateway profile.
type Profile struct{}

// egStrategicKeys are the lists Envoy Gateway's API types tag patchStrategy=merge, with their
// patchMergeKey, per policy kind (paths in the spec proper).
var egStrategicKeys = map[string]map[string][]string{
	"BackendTrafficPolicy": {
		"compression": {"type"},
		"compressor":  {"type"},
		"httpUpgrade": {"type"},
	},
	"SecurityPolicy": {
		"extAuth.contextExtensions": {"name"},
	},
}

const (
	egMergeJSON      = "jsonmerge"
	egMergeStrategic = "strategicmerge"
)

// Name implements semantics.Profile.
func (Profile) Name() string { return semantics.EnvoyGateway }

// MergeSchema (semantics.Profile): with StrategicMerge the lists Envoy Gateway's types tag merge item by item;
// everything else (JSONMerge, and policies without mergeType, which never merge) replaces
// lists whole, whatever the CRD says. A list merged by key is still one leaf of fieldSources
// (docs/spec.md §5.6: the CRD does not make it a list-map), named after the policy whose merge made it.
func (Profile) MergeSchema(kind string, _ *apiextv1.JSONSchemaProps, named string) *merge.Schema {
	if named != egMergeStrategic {
		return nil
	}
	var m *merge.Schema
	for path, keys := range egStrategicKeys[kind] {
		m = merge.WithPath(m, semantics.PathParts(path), func(n *merge.Schema) { n.MapKeys, n.WholeList = keys, true })
	}
	return m
}

// ReportedStrategy (semantics.Profile): a route policy with mergeType is merged by a rule of Envoy Gateway's own
// (the child decides, onto the closest parent only): Custom. Without it a policy applies whole
// where it is the most specific: AtomicDefaults.
func (Profile) ReportedStrategy(kind string, e *semantics.Entry) v1alpha1.MergeStrategy {
	switch {
	case kind == patchPolicy: // every policy applies, in Envoy Gateway's order
		return v1alpha1.MergeCustom
	case e.Strategy == v1alpha1.MergeNone:
		return v1alpha1.MergeNone
	case e.Named != "":
		return v1alpha1.MergeCustom
	}
	return v1alpha1.MergeAtomicDefaults
}

// ruleMessages name each kind's rule for source messages.
var ruleMessages = map[string]string{
	"BackendTrafficPolicy": ruleMostSpecific + "; on TCP and UDP routes each setting Envoy Gateway applies there comes from the most specific policy that has it, the others are left out" + ruleOldest,
	"SecurityPolicy":       ruleMostSpecific + "; on TCP routes only authorization applies, from the most specific policy that has it; none on UDP routes" + ruleOldest,
	"EnvoyExtensionPolicy": ruleMostSpecific + "; on HTTP and GRPC routes only" + ruleOldest,
	"ClientTrafficPolicy":  "Envoy Gateway: of a listener's own policy, its ListenerSet's and its Gateway's the most specific applies whole" + ruleOldest,
	patchPolicy:            patchPolicyRule,
}

const (
	ruleMostSpecific = "Envoy Gateway: only the most specific policy applies (route rule, route, ListenerSet listener, ListenerSet, listener, Gateway), a route policy with mergeType merged onto the closest ListenerSet listener, ListenerSet, listener or Gateway policy"
	ruleOldest       = "; of two on one target the oldest applies"
)

// Rule implements semantics.Profile.
func (Profile) Rule(kind string) string {
	if m, ok := ruleMessages[kind]; ok {
		return m
	}
	return ruleMostSpecific + ruleOldest
}

// Direct (semantics.Profile): the oldest policy on a target applies whole (a descriptor of a
// user's naming this profile for a Direct kind; Envoy Gateway's own kinds are Inherited).
func (Profile) Direct(cands []*semantics.Policy) []*semantics.Policy { return cands[:1] }

// Fold implements semantics.Profile.
func (Profile) Fold(es []semantics.FoldEntry, flavor string) semantics.FoldValue {
	if flavor == egFlavorPatch {
		return foldPatchPolicies(es)
	}
	conflicts := semantics.SameTargetWinners(es)
	fv := semantics.FoldValue{ConflictedBy: conflicts}
	switch flavor {
	case flavorSPTCP:
		fv.Apart = invalidOnTCPRoute(es)
	case flavorBTPTCP:
		fv.Apart = onTLSRouteRule(es)
	}
	for i := range fv.Apart {
		// Envoy Gateway settles same-target conflicts before it validates a policy against
		// its target: a loser stays Conflicted.
		if conflicts != nil && conflicts[i] != nil {
			fv.Apart[i] = false
		}
	}
	live := liveEntries(es, conflicts, fv.Apart)
	if flavor == flavorSPTCP && len(live) > 0 && mergedInvalidOnTCPRoute(es, live) {
		fv.Apart = markApart(fv.Apart, len(es), live[len(live)-1])
		live = live[:len(live)-1]
	}
	if len(live) == 0 {
		return fv
	}
	last := live[len(live)-1]
	child := es[last]
	fv.Acc = merge.Build(child.Entry.Spec, last, child.Entry.Schema)
	parent := mergeParent(es, live)
	if parent >= 0 {
		// The parent is read with the child's merge rules (its lists keyed as the child's
		// mergeType says), so its leaves are counted that way too.
		pb := merge.Build(es[parent].Entry.Spec, parent, child.Entry.Schema)
		fv.Totals = make([]int, len(es))
		for i := range es {
			fv.Totals[i] = es[i].Entry.Leaves
		}
		fv.Totals[parent] = countBuilt(pb)
		fv.Acc = merge.Patch(pb, fv.Acc)
	}
	if slots := slotsOf(es, live, flavor); slots != nil {
		fv.Acc = combineSlots(es, live, fv.Acc, slots)
	}
	return fv
}

// liveEntries are the entries Envoy Gateway applies, most specific last: those on Gateways,
// ListenerSets, their listeners and routes, not beaten on their target.
func liveEntries(es []semantics.FoldEntry, conflicts []*semantics.Policy, apart []bool) []int {
	var live []int
	for i := range es {
		if conflicts != nil && conflicts[i] != nil || apart != nil && apart[i] {
			continue
		}
		if n := es[i].Node; gatewaySide(n) || isRoute(n) {
			live = append(live, i)
		}
	}
	return live
}

// mergeParent is the entry the most specific live entry is merged onto, or -1. Only a route's
// or a rule's entry with mergeType merges, onto the closest Gateway-side entry of its via
// (route entries skipped): a route through a ListenerSet listener has the ListenerSet and
// that listener on its path, never a Gateway listener, so the last Gateway-side entry is
// Envoy Gateway's closest parent.
func mergeParent(es []semantics.FoldEntry, live []int) int {
	child := es[live[len(live)-1]]
	if child.Entry.Named == "" || !isRoute(child.Node) {
		return -1
	}
	parent := -1
	for _, i := range live[:len(live)-1] {
		if gatewaySide(es[i].Node) {
			parent = i
		}
	}
	return parent
}

// gatewaySide reports a Gateway, a ListenerSet of gateway.networking.k8s.io (Envoy Gateway reads
// no XListenerSet), or one of their listeners.
func gatewaySide(n topology.NodeID) bool {
	return n.Group == topology.GatewayGroup && (n.Kind == "Gateway" || n.Kind == "ListenerSet")
}

// isRoute reports a route of gateway.networking.k8s.io, or one of its rules: Envoy Gateway's
// policies target no other group.
func isRoute(n topology.NodeID) bool {
	return n.Group == topology.GatewayGroup && topology.IsRouteGK(n.GK())
}

func countBuilt(v *merge.Value) int {
	n := 0
	merge.WalkLeaves(merge.StripNulls(v), "", func(string, int) { n++ })
	return n
}

// UnnamedRuleSections implements semantics.Profile.
func (Profile) UnnamedRuleSections() bool { return false }

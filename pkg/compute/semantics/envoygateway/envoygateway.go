package envoygateway

// The Envoy Gateway profile (v1.9: BackendTrafficPolicy, SecurityPolicy, EnvoyExtensionPolicy,
// ClientTrafficPolicy), from github.com/envoyproxy/gateway v1.9.0:
//
//   - internal/gatewayapi/backendtrafficpolicy.go (securitypolicy.go and envoyextensionpolicy.go
//     alike): policies are processed route rule, route, listener, Gateway; a route's settings are
//     set once (translateBackendTrafficPolicyForRoute, and for Gateway policies
//     translateBackendTrafficPolicyForListeners skips routes whose Traffic is already set), so on
//     HTTP and GRPC routes only the most specific level with a policy counts.
//   - processBackendTrafficPolicyForRoute: a route (or rule) policy with mergeType is merged
//     (utils.Merge, the route policy patching the parent) onto the closest Gateway-side policy
//     only: the listener's if there is one, else the Gateway's. A rule policy never merges with
//     the route policy.
//   - internal/utils/merge.go: JSONMerge is RFC 7386; StrategicMerge is
//     strategicpatch.StrategicMergePatch with the API types' tags (patchMergeKey, in
//     api/v1alpha1/*_types.go), which merge compression, compressor and httpUpgrade items by type
//     and extAuth.contextExtensions by name.
//   - resolveBackendTrafficPolicyGatewayTargetRef / ...RouteTargetRef and the order of
//     internal/gatewayapi/resource/resource.go (*Resources).Sort: of two policies on one target
//     the oldest (creationTimestamp, then namespace/name) applies, the others are Conflicted.
//   - applyTrafficFeatureToRoute and translateBackendTrafficPolicyForListeners: on TCP (TCPRoute,
//     and TLSRoute, whose routes are TCP routes in the IR) and UDP routes each setting is set if
//     still unset (setIfNil), so a BackendTrafficPolicy's top-level fields combine, the most
//     specific policy winning field by field.

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

// egFlavorL4 is the flavor of BackendTrafficPolicy on TCP and UDP routes; egFlavorPatch that of
// EnvoyPatchPolicy, whose policies all apply.
const (
	egFlavorL4    = "l4"
	egFlavorPatch = "patch"
)

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

// Flavor implements semantics.Profile.
func (Profile) Flavor(kind string, target topology.NodeID) string {
	if kind == patchPolicy {
		return egFlavorPatch
	}
	if kind != "BackendTrafficPolicy" || target.Group != topology.GatewayGroup {
		return ""
	}
	switch target.Kind {
	case "TCPRoute", "UDPRoute", "TLSRoute":
		return egFlavorL4
	}
	return ""
}

// Rule implements semantics.Profile.
func (Profile) Rule(kind string) string {
	if kind == patchPolicy {
		return patchPolicyRule
	}
	if kind == "ClientTrafficPolicy" {
		return "Envoy Gateway: a listener policy beats the Gateway policy for its listener; of two on one target the oldest applies"
	}
	return "Envoy Gateway: only the most specific policy applies (route rule, route, listener, Gateway; on TCP and UDP routes field by field), a route policy with mergeType merged onto the closest listener or Gateway policy; of two on one target the oldest applies"
}

// Direct (semantics.Profile): ClientTrafficPolicy; the oldest policy on a target applies whole.
func (Profile) Direct(cands []*semantics.Policy) []*semantics.Policy { return cands[:1] }

// Fold implements semantics.Profile.
func (Profile) Fold(es []semantics.FoldEntry, flavor string) semantics.FoldValue {
	if flavor == egFlavorPatch {
		return foldPatchPolicies(es)
	}
	conflicts := semantics.SameTargetWinners(es)
	var live []int // entries Envoy Gateway applies: on Gateways and routes, not beaten on their target
	for i := range es {
		if conflicts != nil && conflicts[i] != nil {
			continue
		}
		if n := es[i].Node; n.Group == topology.GatewayGroup && (n.Kind == "Gateway" || topology.IsRouteGK(n.GK())) {
			live = append(live, i)
		}
	}
	fv := semantics.FoldValue{ConflictedBy: conflicts}
	if len(live) == 0 {
		return fv
	}
	if flavor == egFlavorL4 {
		fv.Acc = combineTopLevel(es, live)
		return fv
	}
	last := live[len(live)-1]
	child := es[last]
	fv.Acc = merge.Build(child.Entry.Spec, last, child.Entry.Schema)
	if child.Entry.Named == "" || !topology.IsRouteGK(child.Node.GK()) {
		return fv
	}
	parent := -1
	for _, i := range live[:len(live)-1] {
		if es[i].Node.Kind == "Gateway" {
			parent = i // the last one: the listener's when there is one
		}
	}
	if parent < 0 {
		return fv
	}
	// The parent is read with the child's merge rules (its lists keyed as the child's
	// mergeType says), so its leaves are counted that way too.
	pb := merge.Build(es[parent].Entry.Spec, parent, child.Entry.Schema)
	fv.Totals = make([]int, len(es))
	for i := range es {
		fv.Totals[i] = es[i].Entry.Leaves
	}
	fv.Totals[parent] = countBuilt(pb)
	fv.Acc = merge.Patch(pb, fv.Acc)
	return fv
}

// combineTopLevel takes each top-level field from the most specific of the live entries that
// sets it.
func combineTopLevel(es []semantics.FoldEntry, live []int) *merge.Value {
	acc := &merge.Value{IsObj: true, Obj: map[string]*merge.Value{}, Src: live[len(live)-1]}
	for j := len(live) - 1; j >= 0; j-- {
		i := live[j]
		for k, v := range es[i].Entry.Spec {
			if _, set := acc.Obj[k]; !set && v != nil {
				acc.Obj[k] = merge.Build(v, i, es[i].Entry.Schema.Child(k))
			}
		}
	}
	return acc
}

func countBuilt(v *merge.Value) int {
	n := 0
	merge.WalkLeaves(merge.StripNulls(v), "", func(string, int) { n++ })
	return n
}

// Reaches (semantics.Profile): EnvoyPatchPolicy reaches Gateways only.
func (Profile) Reaches(kind string, target topology.NodeID) bool {
	return kind != patchPolicy || target.Group == topology.GatewayGroup && target.Kind == "Gateway"
}

// LimitsReach implements semantics.ReachLimiter.
func (Profile) LimitsReach(kind string) bool { return kind == patchPolicy }

// UnnamedRuleSections implements semantics.Profile.
func (Profile) UnnamedRuleSections() bool { return false }

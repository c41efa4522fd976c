package envoygateway

// EnvoyPatchPolicy, a kind whose policies all apply (docs/spec.md §4.1), from
// github.com/envoyproxy/gateway v1.9.0:
//
//   - internal/gatewayapi/envoypatchpolicy.go ProcessEnvoyPatchPolicies: every policy whose
//     targetRef names an accepted Gateway of the policy's namespace is appended to that
//     Gateway's xDS IR; none replaces or conflicts with another. A targetRef of another kind is
//     rejected (Accepted=False, Invalid). With mergeGateways (an EnvoyProxy setting this API
//     does not read) Envoy Gateway takes GatewayClass targets instead; the profile follows the
//     default, Gateways.
//   - internal/gatewayapi/resource/resource.go (*Resources).Sort: the policies are sorted by
//     spec.priority ascending, then creationTimestamp, then namespace, then name, before the
//     translator runs; internal/xds/translator/jsonpatch.go applies them in that order.
//   - The policy applies to the Gateway's own xDS resources (whichever its patches name), not
//     to the routes below it as a policy of theirs: it reaches Gateways only.

import (
	"sort"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

const patchPolicy = "EnvoyPatchPolicy"

// patchPolicyDescriptor is EnvoyPatchPolicy's descriptor: one targetRef, a Gateway; the spec
// proper (type, priority, jsonPatches) applies as it is.
func patchPolicyDescriptor() semantics.Descriptor {
	return semantics.Descriptor{
		Group: group, Kind: patchPolicy, Class: v1alpha1.ClassInherited, Semantics: semantics.EnvoyGateway,
		TargetRef:       []string{"spec.targetRef"},
		TargetKinds:     []semantics.TargetKind{{Group: topology.GatewayGroup, Kind: "Gateway"}},
		DefaultStrategy: semantics.StrategyAtomic,
	}
}

// patchPolicyRule is the rule source messages name.
const patchPolicyRule = "Envoy Gateway: every EnvoyPatchPolicy on a Gateway applies, in order of spec.priority, then age"

// foldPatchPolicies lists every entry attached to a Gateway, in the order Envoy Gateway applies
// them: each is one leaf, "/<i>", wholly in effect.
func foldPatchPolicies(es []semantics.FoldEntry) semantics.FoldValue {
	var idx []int
	for i := range es {
		if n := es[i].Node; n.Group == topology.GatewayGroup && n.Kind == "Gateway" {
			idx = append(idx, i)
		}
	}
	fv := semantics.FoldValue{Totals: make([]int, len(es))}
	if len(idx) == 0 {
		return fv
	}
	sort.SliceStable(idx, func(a, b int) bool {
		pa, pb := patchPriority(es[idx[a]].Entry.Spec), patchPriority(es[idx[b]].Entry.Spec)
		if pa != pb {
			return pa < pb
		}
		return semantics.EstablishedBefore(es[idx[a]].Policy, es[idx[b]].Policy)
	})
	specs := make([]interface{}, len(idx))
	for j, i := range idx {
		specs[j] = es[i].Entry.Spec
		fv.Totals[i] = 1
	}
	fv.Acc = merge.Ordered(specs, idx)
	return fv
}

// patchPriority is spec.priority (0 when unset, as the CRD defaults it): JSON numbers arrive as
// int64 or float64.
func patchPriority(spec map[string]interface{}) float64 {
	switch p := spec["priority"].(type) {
	case int64:
		return float64(p)
	case float64:
		return p
	case int:
		return float64(p)
	}
	return 0
}

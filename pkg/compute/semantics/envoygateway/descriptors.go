package envoygateway

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
)

const group = "gateway.envoyproxy.io"

// Descriptors (semantics.Profile): the policy kinds of gateway.envoyproxy.io v1.9
// (EnvoyPatchPolicy: patchpolicy.go). BackendTrafficPolicy, SecurityPolicy and EnvoyExtensionPolicy name their merge
// with mergeType (api/v1alpha1/policy_helpers.go MergeType); a policy without it applies whole
// where it is the most specific. A ClientTrafficPolicy has no mergeType: the most specific of
// listener, ListenerSet and Gateway applies whole (internal/gatewayapi/clienttrafficpolicy.go
// ProcessClientTrafficPolicies: sectioned policies first, then ListenerSet-wide, then
// Gateway-wide ones on the listeners not yet claimed, ListenerSet listeners included).
func (Profile) Descriptors() []semantics.Descriptor {
	inherited := func(kind string) semantics.Descriptor {
		return semantics.Descriptor{
			Group: group, Kind: kind, Class: v1alpha1.ClassInherited, Semantics: semantics.EnvoyGateway,
			TargetRef:       []string{"spec.targetRef"},
			TargetRefs:      []string{"spec.targetRefs"},
			TargetSelectors: []string{"spec.targetSelectors"},
			DefaultStrategy: semantics.StrategyAtomic,
			StrategyField:   "mergeType",
			StrategyValues:  map[string]string{egMergeStrategic: semantics.StrategyPatch, egMergeJSON: semantics.StrategyPatch},
		}
	}
	return []semantics.Descriptor{
		inherited("BackendTrafficPolicy"),
		{
			// Inherited within the Gateway side only (Reaches): a Gateway-wide policy applies to
			// the listeners of the Gateway's ListenerSets that have none of their own.
			Group: group, Kind: "ClientTrafficPolicy", Class: v1alpha1.ClassInherited, Semantics: semantics.EnvoyGateway,
			TargetRef: []string{"spec.targetRef"}, TargetRefs: []string{"spec.targetRefs"},
			TargetSelectors: []string{"spec.targetSelectors"},
			DefaultStrategy: semantics.StrategyAtomic,
		},
		inherited("SecurityPolicy"),
		inherited("EnvoyExtensionPolicy"),
		patchPolicyDescriptor(),
	}
}

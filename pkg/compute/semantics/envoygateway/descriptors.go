package envoygateway

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
)

const group = "gateway.envoyproxy.io"

// Descriptors (semantics.Profile): the policy kinds of gateway.envoyproxy.io v1.9. The inherited
// ones name their merge with mergeType (api/v1alpha1/policy_helpers.go MergeType); a policy
// without it applies whole where it is the most specific.
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
			Group: group, Kind: "ClientTrafficPolicy", Class: v1alpha1.ClassDirect, Semantics: semantics.EnvoyGateway,
			TargetRef: []string{"spec.targetRef"}, TargetRefs: []string{"spec.targetRefs"},
			TargetSelectors: []string{"spec.targetSelectors"},
		},
		inherited("SecurityPolicy"),
		inherited("EnvoyExtensionPolicy"),
		patchPolicyDescriptor(),
	}
}

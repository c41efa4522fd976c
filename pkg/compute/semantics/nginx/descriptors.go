package nginx

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
)

const group = "gateway.nginx.org"

// Descriptors (semantics.Profile): the policy kinds of gateway.nginx.org v2.6.
func (Profile) Descriptors() []semantics.Descriptor {
	direct := func(kind string) semantics.Descriptor {
		return semantics.Descriptor{
			Group: group, Kind: kind, Class: v1alpha1.ClassDirect, Semantics: semantics.NGINXGatewayFabric,
			TargetRef: []string{"spec.targetRef"}, TargetRefs: []string{"spec.targetRefs"},
		}
	}
	return []semantics.Descriptor{
		{
			Group: group, Kind: "ClientSettingsPolicy", Class: v1alpha1.ClassInherited, Semantics: semantics.NGINXGatewayFabric,
			TargetRef: []string{"spec.targetRef"}, TargetRefs: []string{"spec.targetRefs"},
			DefaultStrategy: semantics.StrategyPatch,
		},
		direct("ObservabilityPolicy"),
		direct("UpstreamSettingsPolicy"),
	}
}

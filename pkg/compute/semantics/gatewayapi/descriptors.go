package gatewayapi

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
)

// Descriptors (semantics.Profile): the policy kinds of gateway.networking.k8s.io and its
// experimental twin. Both are Direct (the CRDs' gateway.networking.k8s.io/policy label).
func (Profile) Descriptors() []semantics.Descriptor {
	direct := func(group, kind string) semantics.Descriptor {
		return semantics.Descriptor{
			Group: group, Kind: kind, Class: v1alpha1.ClassDirect, Semantics: semantics.GatewayAPI,
			TargetRefs: []string{"spec.targetRefs"},
		}
	}
	return []semantics.Descriptor{
		direct("gateway.networking.k8s.io", "BackendTLSPolicy"),
		direct("gateway.networking.x-k8s.io", "XBackendTrafficPolicy"),
	}
}

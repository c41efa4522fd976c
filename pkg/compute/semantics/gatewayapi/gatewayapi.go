package gatewayapi

// The Gateway API profile (v1.6: BackendTLSPolicy, XBackendTrafficPolicy), from
// sigs.k8s.io/gateway-api v1.6.3. Both kinds are Direct, and Gateway API's own rule for them is
// docs/spec.md §5.3 as written (a policy on a Service port beats one on the whole Service; on one
// target the oldest wins, then namespace/name), so the profile is the GEP one under its own name.

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics/gep"
)

// Profile is the Gateway API profile.
type Profile struct{ gep.Profile }

// Name implements semantics.Profile.
func (Profile) Name() string { return semantics.GatewayAPI }

// Descriptors (semantics.Profile): the policy kinds of gateway.networking.k8s.io and its
// experimental twin.
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

package gatewayapi

// The Gateway API profile (v1.6: BackendTLSPolicy, XBackendTrafficPolicy), from
// sigs.k8s.io/gateway-api v1.6.3 (and its conformance module at the same version):
//
//   - apis/v1/backendtlspolicy_types.go (BackendTLSPolicySpec.TargetRefs): "When more than one
//     BackendTLSPolicy selects the same target and sectionName", the older creationTimestamp
//     takes precedence, then {namespace}/{name}; every other one gets Accepted False, reason
//     Conflicted. conformance/tests/backendtlspolicy-conflict-resolution.go checks it without
//     and with a sectionName, and that a policy on a port and one on the whole Service are both
//     Accepted, the port's policy serving that port and the Service's the other ports.
//   - apisx/v1alpha1/xbackendtrafficpolicy_types.go: XBackendTrafficPolicy is "a Direct Attached
//     Policy" with "no Override or Default policy configuration"; GEP-713 ("Merge strategy:
//     None") makes the oldest policy on a target win, then {namespace}/{name}, the others
//     rejected. Gateway API has no conformance test for it.
//
// That is docs/spec.md §5.3 as written, so the profile is the GEP one under its own name, but for
// where the kinds take effect (reach.go).

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics/gep"
)

// Profile is the Gateway API profile.
type Profile struct{ gep.Profile }

// Name implements semantics.Profile.
func (Profile) Name() string { return semantics.GatewayAPI }

package istio

// RequestAuthentication (security.istio.io), from istio.io/istio release-1.31:
//
//   - pilot/pkg/model/authentication.go initAuthenticationPolicies sorts the policies by creation
//     time (sortConfigByCreationTime); getConfigsForWorkload looks in the workload's namespace
//     first, then the root namespace, and keeps every policy ShouldAttachPolicy attaches.
//   - pilot/pkg/security/authn/policy_applier.go newPolicyApplier puts the jwtRules of all of them
//     into one JWT filter (sorted by issuer): every policy applies, none overrides another. The
//     list keeps getConfigsForWorkload's order.

import "github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"

const requestAuthentication = "RequestAuthentication"

const raRule = "Istio: every RequestAuthentication that reaches the workload applies (its jwtRules join one JWT filter); the workload namespace's first, then the root namespace's, each by age"

// raBefore is Istio's lookup order of two RequestAuthentications at one workload.
func raBefore(a, b *semantics.Policy) bool {
	if r := rootFirst(a, b); r != 0 {
		return r > 0 // the root namespace comes last
	}
	return createdBefore(a, b)
}

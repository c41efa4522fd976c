package istio

// AuthorizationPolicy (security.istio.io), from istio.io/istio release-1.31:
//
//   - pilot/pkg/model/authorization.go GetAuthorizationPolicies sorts every policy by creation
//     time (config.go configCompareByCreationTime); ListAuthorizationPolicies looks in the root
//     namespace first, then the workload's, and puts each policy that attaches into the list
//     of its action (CUSTOM, DENY, ALLOW, AUDIT; an unset action is ALLOW, the enum's zero).
//   - pilot/pkg/networking/core/listener_builder.go builds the CUSTOM filters (ext_authz)
//     first, then the others; pilot/pkg/security/authz/builder/builder.go build emits AUDIT,
//     DENY, ALLOW. So a workload evaluates CUSTOM, AUDIT, DENY, ALLOW, each in lookup order.
//   - Every policy applies; none overrides another.

import "github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"

const authorizationPolicy = "AuthorizationPolicy"

const authzRule = "Istio: every AuthorizationPolicy that reaches the workload applies, CUSTOM, AUDIT, DENY, then ALLOW; within an action the root namespace's first, each by age"

// actionRank is the place of a policy's action in Istio's evaluation order.
func actionRank(p *semantics.Policy) int {
	spec, _ := p.Raw["spec"].(map[string]interface{})
	a, _ := spec["action"].(string)
	switch a {
	case "CUSTOM":
		return 0
	case "AUDIT":
		return 1
	case "DENY":
		return 2
	}
	return 3 // ALLOW, also when unset
}

// authzBefore is Istio's evaluation order of two AuthorizationPolicies at one workload.
func authzBefore(a, b *semantics.Policy) bool {
	if ra, rb := actionRank(a), actionRank(b); ra != rb {
		return ra < rb
	}
	if r := rootFirst(a, b); r != 0 {
		return r < 0
	}
	return createdBefore(a, b)
}

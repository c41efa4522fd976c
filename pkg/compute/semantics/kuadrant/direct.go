package kuadrant

// DNSPolicy and TLSPolicy, Kuadrant's Direct kinds, from kuadrant-operator v1.5.2
// (policy-machinery v0.8.0):
//
//   - Targets: spec.targetRef only, a Gateway (CEL rules on group and kind in
//     api/v1/dnspolicy_types.go and tlspolicy_types.go), a listener by sectionName. A target that
//     is not in the topology (a missing Gateway or listener) makes the policy not Accepted,
//     reason TargetNotFound (dnspolicies_validator.go, tlspolicies_validator.go isTargetRefsFound).
//   - Two on one target: isConflict in internal/controller/dnspolicies_validator.go and
//     tlspolicies_validator.go rejects a policy when a strictly older one (creationTimestamp)
//     has a deep-equal targetRef, sectionName included: Accepted False, reason Conflicted,
//     "<Kind> is conflicted by <ns/name>: conflicting policy". A Gateway policy and a listener
//     policy never conflict.
//   - Gateway and listener: a Gateway policy is applied to every listener that has no policy
//     of its kind attached; a listener policy takes its listener (effective_dnspolicies_reconciler.go
//     listenersForPolicy, effective_tls_policies_reconciler.go getTLSPoliciesForListener). Both
//     stay Accepted and Enforced; neither is reported Overridden.
//   - No fold: neither kind goes through EffectivePolicyForPath, and GetMergeStrategy / Merge
//     are never used for them.
//
// That is docs/spec.md §5.3 as written, so the established policy wins whole here as in the GEP
// profile. Where Kuadrant differs, the engine does not follow (see test/upstream/kuadrant/README.md):
// two policies created in the same second both stay Accepted (Before is strict), and a listener
// policy that Kuadrant rejects for a reason the engine cannot see (an excludeAddresses CIDR
// that does not parse, a missing cert-manager issuer) is shown in effect on its listener, where
// Kuadrant applies nothing (the rejected policy still keeps the Gateway policy off it). Kuadrant
// also rejects a TLSPolicy whose issuerRef has no kind although its Issuer exists
// (tls_workflow.go LinkTLSPolicyToIssuerFunc links an Issuer only for kind "Issuer", so
// tlspolicies_validator.go isIssuerFound never sees it), a bug the engine does not mirror.
// Where Kuadrant writes nothing — no DNSRecord for a listener without hostname, no Certificate
// for one effective_tls_policies_reconciler.go validateGatewayListenerBlock refuses — the
// listener gets no entry of the kind (listeners.go).
// The differential harness (docs/differential.md, Kuadrant) shows these as known classes.

import "github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"

// Direct (semantics.Profile): the established policy wins whole.
func (Profile) Direct(cands []*semantics.Policy) []*semantics.Policy { return cands[:1] }

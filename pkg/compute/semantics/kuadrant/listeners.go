package kuadrant

// Which listeners of a Gateway a DNSPolicy or TLSPolicy takes effect on, from
// kuadrant-operator v1.5.2 (internal/controller):
//
//   - DNSPolicy: effective_dnspolicies_reconciler.go Reconcile writes a DNSRecord for each
//     listener listenersForPolicy gives the policy, except a listener with no hostname
//     ("listener has no hostname assigned, skipping").
//   - TLSPolicy: effective_tls_policies_reconciler.go Reconcile skips every listener
//     validateGatewayListenerBlock refuses before it looks for its policies: one without a
//     hostname, without a tls block, without certificateRefs, with a certificateRef of another
//     group than core, another kind than Secret or another namespace than the Gateway's, or
//     with a mode other than Terminate. The Gateway API CRD defaults mode to Terminate and a
//     certificateRef's group to core ("") and kind to Secret, so an unset field is the default.
//
// Kuadrant still picks the policy for such a listener (a policy on it keeps the Gateway's
// policy off it), but writes nothing for it: no DNS name, no certificate. The engine shows
// what is written, so the policy has no entry there (semantics.ListenerReach).

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// ReachesListener implements semantics.ListenerReach. Kinds other than DNSPolicy and
// TLSPolicy take effect on every listener.
func (Profile) ReachesListener(kind string, gateway topology.NodeID, l topology.Listener) bool {
	switch kind {
	case "DNSPolicy":
		return l.Hostname != ""
	case "TLSPolicy":
		return l.Hostname != "" && terminatesOwnCertificates(gateway, l.TLS)
	}
	return true
}

// terminatesOwnCertificates is validateGatewayListenerBlock's test of the tls block.
func terminatesOwnCertificates(gateway topology.NodeID, tls *topology.ListenerTLS) bool {
	if tls == nil || len(tls.CertificateRefs) == 0 || tls.Mode != "" && tls.Mode != "Terminate" {
		return false
	}
	for _, r := range tls.CertificateRefs {
		if r.Group != "" && r.Group != "core" || r.Kind != "" && r.Kind != "Secret" ||
			r.Namespace != "" && r.Namespace != gateway.Namespace {
			return false
		}
	}
	return true
}

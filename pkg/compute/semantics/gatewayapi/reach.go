package gatewayapi

// Where each kind takes effect, from sigs.k8s.io/gateway-api v1.6.3:
//
//   - BackendTLSPolicy "provides a way to configure how a Gateway connects to a Backend via TLS"
//     (apis/v1/backendtlspolicy_types.go): Extended support is a Service that a route's
//     backendRefs use; implementations may also apply it to other backends (Services no route
//     references, "Other resource types beyond Service" such as InferencePool: GEP-1897
//     "Implementation-Specific Usage"). A targetRef's sectionName names a Service port.
//   - XBackendTrafficPolicy: "Currently, Backends (A grouping of like endpoints such as Service,
//     ServiceImport, or any implementation-specific backendRef) are the only valid API target
//     references", and "a TargetRef cannot be scoped to a specific port on a Service"
//     (apisx/v1alpha1/xbackendtrafficpolicy_types.go; its targetRefs have no sectionName).
//
// So neither takes effect on a GatewayClass, Gateway, listener, ListenerSet, route or rule, and
// XBackendTrafficPolicy not on a port alone.

import "github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"

// backendKinds are the kinds that take effect on backends only, each saying whether on a port
// of one (a section of a backend) too.
var backendKinds = map[string]bool{
	"BackendTLSPolicy":      true,
	"XBackendTrafficPolicy": false,
}

// Reaches implements semantics.Profile. A kind the table does not know (a descriptor of a user's
// that names the GatewayAPI semantics) reaches everywhere, as in the GEP profile.
func (Profile) Reaches(kind string, target topology.NodeID) bool {
	ports, ok := backendKinds[kind]
	if !ok {
		return true
	}
	switch topology.LevelOf(target) {
	case topology.LevelBackend:
		return true
	case topology.LevelPort:
		return ports
	}
	return false
}

// LimitsReach implements semantics.ReachLimiter.
func (Profile) LimitsReach(kind string) bool {
	_, ok := backendKinds[kind]
	return ok
}

package istio

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

const securityGroup = "security.istio.io"

// targetKinds are the kinds Istio's validation lets a targetRef name
// (pkg/config/validation/validation.go allowedTargetRefs).
var targetKinds = []semantics.TargetKind{
	{Group: "", Kind: "Service"},
	{Group: networkingGroup, Kind: "ServiceEntry"},
	{Group: topology.GatewayGroup, Kind: "Gateway"},
	{Group: topology.GatewayGroup, Kind: "GatewayClass"},
}

// Descriptors (semantics.Profile): the policy kinds of Istio with targetRefs. Each names its
// targets in spec.targetRef or spec.targetRefs, or its workloads in spec.selector; a policy
// with neither applies to its namespace. The rest of the spec applies as it is (Telemetry's
// is merged, telemetry.go).
func (Profile) Descriptors() []semantics.Descriptor {
	allApply := func(group, kind string) semantics.Descriptor {
		return semantics.Descriptor{
			Group: group, Kind: kind, Class: v1alpha1.ClassInherited, Semantics: semantics.Istio,
			TargetRef:         []string{"spec.targetRef"},
			TargetRefs:        []string{"spec.targetRefs"},
			WorkloadSelectors: []string{"spec.selector"},
			UntargetedScope:   semantics.ScopeNamespace,
			TargetKinds:       targetKinds,
			DefaultStrategy:   semantics.StrategyAtomic,
		}
	}
	return []semantics.Descriptor{
		allApply(securityGroup, authorizationPolicy),
		allApply(securityGroup, requestAuthentication),
		allApply(telemetryGroup, telemetryKind),
		allApply(extensionsGroup, wasmPlugin),
		trafficExtensionDescriptor(allApply(extensionsGroup, trafficExtension)),
		envoyFilterDescriptor(allApply(networkingGroup, envoyFilter)),
	}
}

// envoyFilterDescriptor is EnvoyFilter's: targetRefs, no singular targetRef, and its workload
// selector is spec.workloadSelector ({labels}).
func envoyFilterDescriptor(d semantics.Descriptor) semantics.Descriptor {
	d.TargetRef = nil
	d.WorkloadSelectors = []string{"spec.workloadSelector"}
	return d
}

// trafficExtensionDescriptor is TrafficExtension's: it has targetRefs but no singular targetRef.
func trafficExtensionDescriptor(d semantics.Descriptor) semantics.Descriptor {
	d.TargetRef = nil
	return d
}

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
//
// A selector in the root namespace selects the workloads of every namespace for every kind
// but Telemetry (RootSelectorsMeshWide): Istio looks a workload's policies up in the root
// namespace and the workload's (authorization.go ListAuthorizationPolicies, authentication.go
// getConfigsForWorkload, push_context.go TrafficExtensionsByListenerInfo and EnvoyFilters), and
// policyattachment.go ShouldAttachPolicy matches a selector without looking at the policy's
// namespace. Telemetry's selecting policies come from the workload's namespace alone
// (telemetry.go applicableTelemetries reads NamespaceToTelemetries[namespace]).
func (Profile) Descriptors() []semantics.Descriptor {
	allApply := func(group, kind string) semantics.Descriptor {
		return semantics.Descriptor{
			Group: group, Kind: kind, Class: v1alpha1.ClassInherited, Semantics: semantics.Istio,
			TargetRef:             []string{"spec.targetRef"},
			TargetRefs:            []string{"spec.targetRefs"},
			WorkloadSelectors:     []string{"spec.selector"},
			RootSelectorsMeshWide: true,
			UntargetedScope:       semantics.ScopeNamespace,
			TargetKinds:           targetKinds,
			DefaultStrategy:       semantics.StrategyAtomic,
		}
	}
	return []semantics.Descriptor{
		allApply(securityGroup, authorizationPolicy),
		allApply(securityGroup, requestAuthentication),
		telemetryDescriptor(allApply(telemetryGroup, telemetryKind)),
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

// telemetryDescriptor is Telemetry's: a root namespace selector selects there only.
func telemetryDescriptor(d semantics.Descriptor) semantics.Descriptor {
	d.RootSelectorsMeshWide = false
	return d
}

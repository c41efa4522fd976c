package kgateway

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

const group = "gateway.kgateway.dev"

// Descriptors (semantics.Profile): the policy kinds of gateway.kgateway.dev v2.2 (kgateway
// v2.2.0, install/helm/kgateway-crds/templates: the four CRDs labeled
// gateway.networking.k8s.io/policy). The group's other kinds (Backend, DirectResponse,
// GatewayExtension, GatewayParameters) have no targetRefs.
//
// Every one of them is labeled Direct, yet kgateway merges them: a TrafficPolicy of a Gateway
// reaches its routes (fold.go), a ListenerPolicy of a Gateway its listeners, a
// BackendConfigPolicy of a Service its ports; so each is described as Inherited. The target
// kinds are those of the CRDs' CEL rules on targetRefs and targetSelectors; ListenerSet there
// is kgateway v2.2's XListenerSet (pkg/kgateway/wellknown/gwapi.go).
func (Profile) Descriptors() []semantics.Descriptor {
	gw := semantics.TargetKind{Group: topology.GatewayGroup, Kind: "Gateway"}
	kind := func(kind string, targets ...semantics.TargetKind) semantics.Descriptor {
		return semantics.Descriptor{
			Group: group, Kind: kind, Class: v1alpha1.ClassInherited, Semantics: semantics.Kgateway,
			TargetRefs: []string{"spec.targetRefs"}, TargetSelectors: []string{"spec.targetSelectors"},
			TargetKinds: targets, DefaultStrategy: semantics.StrategyPatch,
		}
	}
	tp := kind("TrafficPolicy", gw, semantics.TargetKind{Group: topology.GatewayGroup, Kind: "HTTPRoute"},
		semantics.TargetKind{Group: topology.ExperimentalGroup, Kind: "XListenerSet"})
	tp.Annotations = []string{weightAnnotation} // read by fold.go's priorityOrder
	return []semantics.Descriptor{
		kind("BackendConfigPolicy", semantics.TargetKind{Kind: "Service"}, semantics.TargetKind{Group: group, Kind: "Backend"}),
		kind("HTTPListenerPolicy", gw),
		kind("ListenerPolicy", gw),
		tp,
	}
}

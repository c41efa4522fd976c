package nginx

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
)

const group = "gateway.nginx.org"

// Descriptors (semantics.Profile): the policy kinds of gateway.nginx.org v2.6 (NGINX Gateway
// Fabric v2.6.7, config/crd/bases: every CRD labeled gateway.networking.k8s.io/policy). The
// group's other kinds (NginxProxy, NginxGateway, SnippetsFilter, AuthenticationFilter) have no
// targetRef: they are referenced from a GatewayClass, a Gateway or a route filter instead.
//
// ClientSettingsPolicy has one spec.targetRef, the others spec.targetRefs; both paths are read
// for every kind, as a policy without either reaches nothing anyway. SnippetsPolicy is
// labeled direct, yet NGINX Gateway Fabric applies it to every HTTPRoute and GRPCRoute of its
// Gateway as well (internal/controller/state/graph/policies.go propagateSnippetsPolicyToRoutes),
// so it is described as Inherited: a route's EffectivePolicy lists the snippets injected there.
func (Profile) Descriptors() []semantics.Descriptor {
	kind := func(kind string, class v1alpha1.PolicyClass) semantics.Descriptor {
		d := semantics.Descriptor{
			Group: group, Kind: kind, Class: class, Semantics: semantics.NGINXGatewayFabric,
			TargetRef: []string{"spec.targetRef"}, TargetRefs: []string{"spec.targetRefs"},
		}
		if class == v1alpha1.ClassInherited {
			// No strategy field: settings are NGINX directives, a more specific block's
			// replacing the inherited ones directive by directive.
			d.DefaultStrategy = semantics.StrategyPatch
		}
		return d
	}
	return []semantics.Descriptor{
		kind("ClientSettingsPolicy", v1alpha1.ClassInherited),
		kind("ObservabilityPolicy", v1alpha1.ClassDirect),
		kind("ProxySettingsPolicy", v1alpha1.ClassInherited),
		kind("RateLimitPolicy", v1alpha1.ClassInherited),
		kind("SnippetsPolicy", v1alpha1.ClassInherited),
		kind("UpstreamSettingsPolicy", v1alpha1.ClassDirect),
		kind("WAFPolicy", v1alpha1.ClassInherited),
	}
}

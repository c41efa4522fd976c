package compute

import (
	"reflect"
	"testing"
)

// TestIstioRootSelector: a policy in the root namespace with a selector applies to every workload
// of the mesh whose pods match, whatever their namespace, with no ReferenceGrant; Telemetry is
// the exception. From istio.io/istio release-1.31 (v0.0.0-20260827124520-eed52ebb66ad):
//
//   - pilot/pkg/model/policyattachment.go ShouldAttachPolicy: a policy without targetRefs is
//     matched by its selector alone (isSelected), not by its namespace;
//   - the lookup namespaces are the root namespace and the workload's: authorization.go
//     ListAuthorizationPolicies, authentication.go getConfigsForWorkload (authentication_test.go
//     TestGetPoliciesForWorkload "Match workload labels in bar": istio-config/global-with-selector
//     applies to a workload in bar), push_context.go TrafficExtensionsByListenerInfo
//     (push_context_test.go TestTrafficExtensions "ingress": istio-system's
//     global-authn-lua-low-prio-ingress applies to a proxy in namespace other), push_context.go
//     EnvoyFilters (getMatchedEnvoyFilters of the root namespace);
//   - telemetry.go applicableTelemetries takes selecting Telemetries from
//     NamespaceToTelemetries[namespace], the workload's namespace only.
func TestIstioRootSelector(t *testing.T) {
	const byClass = "{gateway.networking.k8s.io/gateway-class-name: istio}"
	cases := []struct {
		kind, spec string
	}{
		{"AuthorizationPolicy", "  selector: {matchLabels: " + byClass + "}\n  rules: [{}]"},
		{"RequestAuthentication", "  selector: {matchLabels: " + byClass + "}\n  jwtRules: [{issuer: https://example.org}]"},
		{"WasmPlugin", "  selector: {matchLabels: " + byClass + "}\n  url: oci://example.com/a:v1"},
		{"TrafficExtension", "  selector: {matchLabels: " + byClass + "}\n  lua: {inlineCode: x}"},
		{"EnvoyFilter", "  workloadSelector: {labels: " + byClass + "}\n  configPatches: [{applyTo: HTTP_FILTER}]"},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			pols := istioKindPolicy(c.kind, "istio-system", "root-sel", c.spec) + istioKindPolicy(c.kind, "bar", "bar-sel", c.spec)
			want := map[Key]string{
				// Both selectors select bar's Gateway; only the root one reaches across namespaces.
				{"bar", "gw"}:          "Gateway/gw = " + rootThenBar(c.kind) + "; sources istio-system/root-sel bar/bar-sel",
				{"istio-system", "gw"}: "Gateway/gw = istio-system/root-sel; sources istio-system/root-sel",
			}
			if got := istioKindWorld(t, c.kind, pols); !reflect.DeepEqual(got, want) {
				t.Errorf("got  %v\nwant %v", got, want)
			}
		})
	}
}

// rootThenBar is the order Istio applies istio-system/root-sel and bar/bar-sel of kind in at
// bar's Gateway: the root namespace's first for AuthorizationPolicy and EnvoyFilter, last for the
// kinds looked up in the workload's namespace first.
func rootThenBar(kind string) string {
	if kind == "RequestAuthentication" || kind == "WasmPlugin" || kind == "TrafficExtension" {
		return "bar/bar-sel istio-system/root-sel"
	}
	return "istio-system/root-sel bar/bar-sel"
}

// TestIstioTelemetryRootSelector: a root namespace Telemetry with a selector selects the
// Gateways of the root namespace only (telemetry.go applicableTelemetries).
func TestIstioTelemetryRootSelector(t *testing.T) {
	pols := telemetry("istio-system", "root-sel", "  selector: {matchLabels: {gateway.networking.k8s.io/gateway-class-name: istio}}\n"+envoyTracing)
	got := telemetryWorld(t, pols)
	want := map[Key]string{
		{"istio-system", "gw"}: `Gateway/gw = {"tracing":[{"providers":[{"name":"envoy"}]}]}; istio-system/root-sel Enforced`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

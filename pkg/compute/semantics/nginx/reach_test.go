package nginx

import (
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

func TestReaches(t *testing.T) {
	gw := func(kind, section string) topology.NodeID {
		return topology.NodeID{Group: topology.GatewayGroup, Kind: kind, Namespace: "ns", Name: "x", Section: section}
	}
	service := topology.NodeID{Kind: "Service", Namespace: "ns", Name: "backend"}
	servicePort := topology.NodeID{Kind: "Service", Namespace: "ns", Name: "backend", Section: "http"}
	namespace := topology.NodeID{Kind: "Namespace", Name: "ns"}
	xListenerSet := topology.NodeID{Group: topology.ExperimentalGroup, Kind: "XListenerSet", Namespace: "ns", Name: "ls"}
	xHTTPRoute := topology.NodeID{Group: topology.ExperimentalGroup, Kind: "HTTPRoute", Namespace: "ns", Name: "x"}
	inferencePool := topology.NodeID{Group: "inference.networking.k8s.io", Kind: "InferencePool", Namespace: "ns", Name: "pool"}
	for _, tc := range []struct {
		kind   string
		target topology.NodeID
		want   bool
	}{
		// Settings written into the http block, the servers or the locations of a Gateway.
		{"ClientSettingsPolicy", gw("Gateway", ""), true},
		{"ClientSettingsPolicy", gw("Gateway", "http"), true},
		{"ClientSettingsPolicy", gw("ListenerSet", ""), true},
		{"ClientSettingsPolicy", gw("HTTPRoute", ""), true},
		{"ClientSettingsPolicy", gw("GRPCRoute", "rule-1"), true},
		{"ClientSettingsPolicy", gw("TLSRoute", ""), false},
		{"ClientSettingsPolicy", service, false},
		{"ClientSettingsPolicy", servicePort, false},
		{"ProxySettingsPolicy", gw("Gateway", ""), true},
		{"ProxySettingsPolicy", gw("HTTPRoute", "rule-2"), true},
		{"ProxySettingsPolicy", gw("GRPCRoute", ""), true},
		{"ProxySettingsPolicy", gw("TCPRoute", ""), false},
		{"ProxySettingsPolicy", gw("UDPRoute", ""), false},
		{"ProxySettingsPolicy", gw("GatewayClass", ""), false},
		{"ProxySettingsPolicy", service, false},
		{"ProxySettingsPolicy", servicePort, false},
		{"ProxySettingsPolicy", inferencePool, false},
		{"ProxySettingsPolicy", namespace, false},
		{"ProxySettingsPolicy", xListenerSet, false},
		{"ProxySettingsPolicy", xHTTPRoute, false},
		{"RateLimitPolicy", gw("Gateway", ""), true},
		{"RateLimitPolicy", gw("ListenerSet", "extra"), true},
		{"RateLimitPolicy", gw("GRPCRoute", ""), true},
		{"RateLimitPolicy", service, false},
		{"WAFPolicy", gw("Gateway", ""), true},
		{"WAFPolicy", gw("HTTPRoute", ""), true},
		{"WAFPolicy", gw("TLSRoute", ""), false},
		{"WAFPolicy", service, false},
		// SnippetsPolicy targets Gateways only, and reaches their routes (location snippets).
		{"SnippetsPolicy", gw("Gateway", ""), true},
		{"SnippetsPolicy", gw("HTTPRoute", ""), true},
		{"SnippetsPolicy", gw("GRPCRoute", ""), true},
		{"SnippetsPolicy", service, false},
		// Direct kinds: only what they may target.
		{"ObservabilityPolicy", gw("HTTPRoute", ""), true},
		{"ObservabilityPolicy", gw("GRPCRoute", ""), true},
		{"ObservabilityPolicy", gw("Gateway", ""), false},
		{"ObservabilityPolicy", service, false},
		{"UpstreamSettingsPolicy", service, true},
		{"UpstreamSettingsPolicy", servicePort, true},
		{"UpstreamSettingsPolicy", gw("Gateway", ""), false},
		{"UpstreamSettingsPolicy", gw("HTTPRoute", ""), false},
		{"UpstreamSettingsPolicy", inferencePool, false},
		// A kind of a user's descriptor that names the NGINXGatewayFabric semantics is not restricted.
		{"RetryPolicy", service, true},
		{"RetryPolicy", gw("TLSRoute", ""), true},
	} {
		if got := (Profile{}).Reaches(tc.kind, tc.target); got != tc.want {
			t.Errorf("Reaches(%s, %v) = %v, want %v", tc.kind, tc.target, got, tc.want)
		}
	}
}

func TestLimitsReach(t *testing.T) {
	for _, d := range (Profile{}).Descriptors() {
		if !(Profile{}).LimitsReach(d.Kind) {
			t.Errorf("LimitsReach(%s) = false: every kind of the group reaches only some objects", d.Kind)
		}
	}
	if (Profile{}).LimitsReach("RetryPolicy") {
		t.Errorf("LimitsReach(RetryPolicy) = true, want false for a kind the profile does not know")
	}
}

package kuadrant

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
	xListenerSet := topology.NodeID{Group: topology.ExperimentalGroup, Kind: "XListenerSet", Namespace: "ns", Name: "ls"}
	xHTTPRoute := topology.NodeID{Group: topology.ExperimentalGroup, Kind: "HTTPRoute", Namespace: "ns", Name: "x"}
	for _, tc := range []struct {
		kind   string
		target topology.NodeID
		want   bool
	}{
		{"RateLimitPolicy", gw("Gateway", ""), true},
		{"RateLimitPolicy", gw("Gateway", "http"), true},
		{"RateLimitPolicy", gw("HTTPRoute", ""), true},
		{"RateLimitPolicy", gw("HTTPRoute", "rule-1"), true},
		{"RateLimitPolicy", gw("GRPCRoute", ""), true},
		{"RateLimitPolicy", gw("TLSRoute", ""), false},
		{"RateLimitPolicy", gw("GatewayClass", ""), false},
		{"RateLimitPolicy", service, false},
		{"RateLimitPolicy", servicePort, false},
		{"AuthPolicy", gw("Gateway", ""), true},
		{"AuthPolicy", gw("GRPCRoute", "rule-2"), true},
		{"AuthPolicy", gw("TCPRoute", ""), false},
		{"AuthPolicy", service, false},
		{"TokenRateLimitPolicy", gw("Gateway", ""), true},
		{"TokenRateLimitPolicy", gw("Gateway", "api"), true},
		{"TokenRateLimitPolicy", gw("HTTPRoute", ""), true},
		{"TokenRateLimitPolicy", gw("HTTPRoute", "rule-1"), true},
		{"TokenRateLimitPolicy", gw("GRPCRoute", ""), false},
		{"TokenRateLimitPolicy", gw("UDPRoute", ""), false},
		{"TokenRateLimitPolicy", service, false},
		{"TokenRateLimitPolicy", servicePort, false},
		{"TokenRateLimitPolicy", xListenerSet, false},
		{"TokenRateLimitPolicy", gw("ListenerSet", ""), false},
		{"RateLimitPolicy", gw("ListenerSet", "extra"), false},
		{"TokenRateLimitPolicy", xHTTPRoute, false},
		{"DNSPolicy", gw("Gateway", ""), true},
		{"DNSPolicy", gw("Gateway", "http"), true},
		{"DNSPolicy", gw("HTTPRoute", ""), false},
		{"DNSPolicy", gw("ListenerSet", "extra"), false},
		{"DNSPolicy", xListenerSet, false},
		{"TLSPolicy", gw("Gateway", ""), true},
		{"TLSPolicy", gw("Gateway", "test1.example.com"), true},
		{"TLSPolicy", gw("HTTPRoute", "rule-1"), false},
		{"TLSPolicy", gw("TLSRoute", ""), false},
		{"TLSPolicy", service, false},
		{"TLSPolicy", servicePort, false},
		// A kind of a user's descriptor that names the Kuadrant semantics is not restricted.
		{"PlanPolicy", service, true},
		{"PlanPolicy", gw("TLSRoute", ""), true},
	} {
		if got := (Profile{}).Reaches(tc.kind, tc.target); got != tc.want {
			t.Errorf("Reaches(%s, %v) = %v, want %v", tc.kind, tc.target, got, tc.want)
		}
	}
}

func TestLimitsReach(t *testing.T) {
	for kind, want := range map[string]bool{
		"RateLimitPolicy": true, "AuthPolicy": true, "TokenRateLimitPolicy": true,
		"DNSPolicy": true, "TLSPolicy": true, "PlanPolicy": false,
	} {
		if got := (Profile{}).LimitsReach(kind); got != want {
			t.Errorf("LimitsReach(%s) = %v, want %v", kind, got, want)
		}
	}
}

func TestRuleNamesTokenRateLimitPolicy(t *testing.T) {
	for _, kind := range []string{"RateLimitPolicy", "TokenRateLimitPolicy", "AuthPolicy"} {
		if (Profile{}).Rule(kind) == "" {
			t.Errorf("Rule(%s) is empty: its named rules would be merged inside", kind)
		}
	}
}

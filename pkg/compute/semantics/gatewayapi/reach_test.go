package gatewayapi

import (
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

var _ semantics.ReachLimiter = Profile{}

func TestReaches(t *testing.T) {
	gw := func(kind, section string) topology.NodeID {
		return topology.NodeID{Group: topology.GatewayGroup, Kind: kind, Namespace: "ns", Name: "x", Section: section}
	}
	service := topology.NodeID{Kind: "Service", Namespace: "ns", Name: "backend"}
	servicePort := topology.NodeID{Kind: "Service", Namespace: "ns", Name: "backend", Section: "https"}
	serviceImport := topology.NodeID{Group: "multicluster.x-k8s.io", Kind: "ServiceImport", Namespace: "ns", Name: "backend"}
	inferencePool := topology.NodeID{Group: "inference.networking.k8s.io", Kind: "InferencePool", Namespace: "ns", Name: "pool"}
	xListenerSet := topology.NodeID{Group: topology.ExperimentalGroup, Kind: "XListenerSet", Namespace: "ns", Name: "ls"}
	namespace := topology.NodeID{Kind: "Namespace", Name: "ns"}
	for _, tc := range []struct {
		kind   string
		target topology.NodeID
		want   bool
	}{
		{"BackendTLSPolicy", service, true},
		{"BackendTLSPolicy", servicePort, true},
		{"BackendTLSPolicy", serviceImport, true},
		{"BackendTLSPolicy", inferencePool, true},
		{"BackendTLSPolicy", gw("GatewayClass", ""), false},
		{"BackendTLSPolicy", gw("Gateway", ""), false},
		{"BackendTLSPolicy", gw("Gateway", "https"), false},
		{"BackendTLSPolicy", gw("HTTPRoute", ""), false},
		{"BackendTLSPolicy", gw("HTTPRoute", "rule-1"), false},
		{"BackendTLSPolicy", gw("ListenerSet", ""), false},
		{"BackendTLSPolicy", namespace, false},
		{"XBackendTrafficPolicy", service, true},
		{"XBackendTrafficPolicy", serviceImport, true},
		{"XBackendTrafficPolicy", servicePort, false},
		{"XBackendTrafficPolicy", gw("Gateway", ""), false},
		{"XBackendTrafficPolicy", gw("GRPCRoute", ""), false},
		{"XBackendTrafficPolicy", gw("TLSRoute", ""), false},
		{"XBackendTrafficPolicy", xListenerSet, false},
		// A kind of a user's descriptor that names the GatewayAPI semantics is not restricted.
		{"MyPolicy", gw("Gateway", ""), true},
	} {
		if got := (Profile{}).Reaches(tc.kind, tc.target); got != tc.want {
			t.Errorf("Reaches(%s, %v) = %v, want %v", tc.kind, tc.target, got, tc.want)
		}
	}
}

func TestLimitsReach(t *testing.T) {
	for kind, want := range map[string]bool{"BackendTLSPolicy": true, "XBackendTrafficPolicy": true, "MyPolicy": false} {
		if got := (Profile{}).LimitsReach(kind); got != want {
			t.Errorf("LimitsReach(%s) = %v, want %v", kind, got, want)
		}
	}
}

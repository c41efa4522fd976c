package envoygateway

import (
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

func TestReachesAndFlavor(t *testing.T) {
	gw := func(kind, section string) topology.NodeID {
		return topology.NodeID{Group: topology.GatewayGroup, Kind: kind, Namespace: "ns", Name: "x", Section: section}
	}
	service := topology.NodeID{Kind: "Service", Namespace: "ns", Name: "backend"}
	xListenerSet := topology.NodeID{Group: topology.ExperimentalGroup, Kind: "XListenerSet", Namespace: "ns", Name: "ls", Section: "l"}
	xTCPRoute := topology.NodeID{Group: topology.ExperimentalGroup, Kind: "TCPRoute", Namespace: "ns", Name: "x"}
	const btp, sp, eep, ctp = "BackendTrafficPolicy", "SecurityPolicy", "EnvoyExtensionPolicy", "ClientTrafficPolicy"
	for _, tc := range []struct {
		kind    string
		target  topology.NodeID
		reaches bool
		flavor  string
	}{
		{btp, gw("Gateway", ""), true, ""},
		{btp, gw("ListenerSet", "l"), true, ""},
		{btp, gw("HTTPRoute", "rule-1"), true, ""},
		{btp, gw("TCPRoute", ""), true, flavorBTPTCP},
		{btp, gw("TLSRoute", "r"), true, flavorBTPTCP},
		{btp, gw("UDPRoute", ""), true, flavorBTPUDP},
		{btp, service, true, ""},
		{btp, xListenerSet, false, ""},
		{btp, xTCPRoute, false, ""},
		{btp, gw("GatewayClass", ""), false, ""},
		{sp, gw("GRPCRoute", ""), true, ""},
		{sp, gw("TCPRoute", "r"), true, flavorSPTCP},
		{sp, gw("TLSRoute", ""), true, flavorSPTCP},
		{sp, gw("UDPRoute", ""), false, ""},
		{sp, service, true, ""},
		{eep, gw("HTTPRoute", ""), true, ""},
		{eep, gw("ListenerSet", ""), true, ""},
		{eep, gw("TCPRoute", ""), false, ""},
		{eep, gw("UDPRoute", ""), false, ""},
		{eep, gw("TLSRoute", ""), false, ""},
		{ctp, gw("Gateway", "http"), true, ""},
		{ctp, gw("ListenerSet", ""), true, ""},
		{ctp, gw("HTTPRoute", ""), false, ""},
		{ctp, service, false, ""},
		{patchPolicy, gw("Gateway", ""), true, egFlavorPatch},
		{patchPolicy, gw("ListenerSet", ""), false, egFlavorPatch},
		{patchPolicy, gw("HTTPRoute", ""), false, egFlavorPatch},
		{patchPolicy, service, false, egFlavorPatch},
		// A kind of a user's descriptor that names the Envoy Gateway semantics is not restricted.
		{"OtherPolicy", gw("UDPRoute", ""), true, ""},
	} {
		if got := (Profile{}).Reaches(tc.kind, tc.target); got != tc.reaches {
			t.Errorf("Reaches(%s, %v) = %v, want %v", tc.kind, tc.target, got, tc.reaches)
		}
		if got := (Profile{}).Flavor(tc.kind, tc.target); got != tc.flavor {
			t.Errorf("Flavor(%s, %v) = %q, want %q", tc.kind, tc.target, got, tc.flavor)
		}
	}
}

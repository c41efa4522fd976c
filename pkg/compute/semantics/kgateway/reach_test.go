package kgateway

import (
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

func TestReaches(t *testing.T) {
	gw := topology.NodeID{Group: topology.GatewayGroup, Kind: "Gateway", Name: "gw"}
	listener := gw
	listener.Section = "http"
	cases := []struct {
		kind   string
		target topology.NodeID
		want   bool
	}{
		{"TrafficPolicy", gw, true},
		{"TrafficPolicy", topology.NodeID{Group: topology.GatewayGroup, Kind: "GRPCRoute", Name: "r"}, true},
		{"TrafficPolicy", topology.NodeID{Group: topology.GatewayGroup, Kind: "HTTPRoute", Name: "r", Section: "a"}, true},
		{"TrafficPolicy", topology.NodeID{Group: topology.ExperimentalGroup, Kind: "XListenerSet", Name: "ls"}, true},
		{"TrafficPolicy", topology.NodeID{Group: topology.GatewayGroup, Kind: "TLSRoute", Name: "r"}, false},
		{"TrafficPolicy", topology.NodeID{Kind: "Service", Name: "s"}, false},
		{"ListenerPolicy", listener, true},
		{"ListenerPolicy", topology.NodeID{Group: topology.GatewayGroup, Kind: "HTTPRoute", Name: "r"}, false},
		{"HTTPListenerPolicy", gw, true},
		{"BackendConfigPolicy", topology.NodeID{Kind: "Service", Name: "s", Section: "80"}, true},
		{"BackendConfigPolicy", topology.NodeID{Group: group, Kind: "Backend", Name: "b"}, true},
		{"BackendConfigPolicy", gw, false},
		{"SomethingElse", gw, true},
	}
	for _, c := range cases {
		if got := (Profile{}).Reaches(c.kind, c.target); got != c.want {
			t.Errorf("%s reaches %v: %v, want %v", c.kind, c.target, got, c.want)
		}
	}
}

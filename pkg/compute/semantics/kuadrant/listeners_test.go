package kuadrant

import (
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// The rows follow kuadrant-operator v1.5.2: effective_dnspolicies_reconciler.go Reconcile (a
// listener without hostname is skipped) and effective_tls_policies_reconciler_test.go
// Test_validateGatewayListenerBlock's table (no hostname, no TLS block, no certificateRefs,
// group "invalid", kind "SomeOtherKind", a cross-namespace secret ref, mode Passthrough are
// refused; an empty group, or the Gateway's namespace, accepted). Its "empty TLS Mode" row
// (refused) cannot occur in a cluster: the Gateway API CRD defaults mode to Terminate, which
// is what an unset mode here stands for.
func TestReachesListener(t *testing.T) {
	gw := topology.NodeID{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: "example"}
	secret := func(group, kind, ns string) *topology.ListenerTLS {
		return &topology.ListenerTLS{Mode: "Terminate", CertificateRefs: []topology.CertificateRef{{Group: group, Kind: kind, Namespace: ns, Name: "example-com"}}}
	}
	https := func(host string, tls *topology.ListenerTLS) topology.Listener {
		return topology.Listener{Name: "l", Protocol: "HTTPS", Port: 443, Hostname: host, TLS: tls}
	}
	http := topology.Listener{Name: "l", Protocol: "HTTP", Port: 80, Hostname: "example.com"}
	for _, tc := range []struct {
		name string
		kind string
		l    topology.Listener
		want bool
	}{
		{"dns with hostname", "DNSPolicy", http, true},
		{"dns without hostname", "DNSPolicy", topology.Listener{Name: "l", Protocol: "HTTP", Port: 80}, false},
		{"dns on a listener tls would refuse", "DNSPolicy", https("example.com", nil), true},
		{"tls valid", "TLSPolicy", https("example.com", secret("core", "Secret", "")), true},
		{"tls group and kind unset (CRD defaults)", "TLSPolicy", https("example.com", secret("", "", "")), true},
		{"tls same namespace", "TLSPolicy", https("example.com", secret("", "Secret", "default")), true},
		{"tls mode unset (CRD default Terminate)", "TLSPolicy", https("example.com", &topology.ListenerTLS{CertificateRefs: secret("", "", "").CertificateRefs}), true},
		{"tls no hostname", "TLSPolicy", https("", secret("", "Secret", "")), false},
		{"tls no tls block (HTTP listener)", "TLSPolicy", http, false},
		{"tls no certificateRefs", "TLSPolicy", https("example.com", &topology.ListenerTLS{Mode: "Terminate"}), false},
		{"tls unsupported group", "TLSPolicy", https("example.com", secret("invalid", "Secret", "")), false},
		{"tls unsupported kind", "TLSPolicy", https("example.com", secret("core", "SomeOtherKind", "")), false},
		{"tls cross-namespace secret ref", "TLSPolicy", https("example.com", secret("", "Secret", "another-namespace")), false},
		{"tls passthrough", "TLSPolicy", https("example.com", &topology.ListenerTLS{Mode: "Passthrough", CertificateRefs: secret("", "", "").CertificateRefs}), false},
		{"rate limits on every listener", "RateLimitPolicy", topology.Listener{Name: "l"}, true},
		{"a user's kind on every listener", "PlanPolicy", topology.Listener{Name: "l"}, true},
	} {
		if got := (Profile{}).ReachesListener(tc.kind, gw, tc.l); got != tc.want {
			t.Errorf("%s: ReachesListener(%s) = %v, want %v", tc.name, tc.kind, got, tc.want)
		}
	}
}

func TestRefusedListeners(t *testing.T) {
	gw := &topology.Gateway{
		ID: topology.NodeID{Group: topology.GatewayGroup, Kind: "Gateway", Namespace: "default", Name: "example"},
		Listeners: []topology.Listener{
			{Name: "http", Protocol: "HTTP", Hostname: "example.com"},
			{Name: "any", Protocol: "HTTP"},
			{Name: "https", Protocol: "HTTPS", Hostname: "example.com", TLS: &topology.ListenerTLS{
				Mode: "Terminate", CertificateRefs: []topology.CertificateRef{{Name: "example-com"}},
			}},
		},
	}
	for _, tc := range []struct {
		kind string
		want []string
	}{
		{"DNSPolicy", []string{"any"}},
		{"TLSPolicy", []string{"http", "any"}},
		{"AuthPolicy", nil},
	} {
		got := semantics.RefusedListeners(Profile{}, tc.kind, gw)
		if len(got) != len(tc.want) {
			t.Errorf("%s: refused %v, want %v", tc.kind, got, tc.want)
		}
		for _, name := range tc.want {
			if !got[name] {
				t.Errorf("%s: %s not refused (%v)", tc.kind, name, got)
			}
		}
	}
	if got := semantics.RefusedListeners(Profile{}, "DNSPolicy", nil); got != nil {
		t.Errorf("no Gateway: refused %v, want nil", got)
	}
}

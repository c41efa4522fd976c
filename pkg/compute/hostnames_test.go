package compute

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// The cases follow the Gateway API v1.6 specification text: apis/v1/gateway_types.go
// (Listener.Hostname: "*.example.com" matches test.example.com and foo.test.example.com, not
// example.com; ignored for protocols without hostname matching) and apis/v1/httproute_types.go
// (HTTPRouteSpec.Hostnames: a listener test.example.com matches routes with no hostnames or
// with test.example.com or *.example.com; a listener *.example.com matches routes with
// *.example.com, test.example.com or foo.test.example.com, not example.com or
// test.example.net; a route whose hostnames match none of a listener's does not attach).
func TestHostnamesIntersect(t *testing.T) {
	for _, tc := range []struct {
		listener, protocol string
		route              []string
		want               bool
	}{
		{"", "HTTP", nil, true},
		{"", "HTTP", []string{"foo.example.com"}, true},
		{"test.example.com", "HTTP", nil, true},
		{"test.example.com", "HTTP", []string{"test.example.com"}, true},
		{"test.example.com", "HTTP", []string{"*.example.com"}, true},
		{"test.example.com", "HTTP", []string{"other.example.com"}, false},
		{"test.example.com", "HTTP", []string{"other.example.com", "test.example.com"}, true},
		{"test.example.com", "HTTP", []string{"*.test.example.com"}, false},
		{"*.example.com", "HTTPS", []string{"*.example.com"}, true},
		{"*.example.com", "HTTPS", []string{"test.example.com"}, true},
		{"*.example.com", "HTTPS", []string{"foo.test.example.com"}, true},
		{"*.example.com", "HTTPS", []string{"example.com"}, false},
		{"*.example.com", "HTTPS", []string{"test.example.net"}, false},
		{"*.example.com", "HTTPS", []string{"*.foo.example.com"}, true},
		{"*.foo.example.com", "HTTPS", []string{"*.example.com"}, true},
		{"*.example.com", "HTTPS", []string{"*.example.net"}, false},
		// Not a valid hostname (the CRDs' pattern rejects it), as request matching judges it.
		{"*.example.com", "HTTPS", []string{".example.com"}, false},
		{"foo.example.com", "TLS", []string{"bar.example.com"}, false},
		{"foo.example.com", "TCP", []string{"bar.example.com"}, true}, // hostname not used by TCP
		{"foo.example.com", "UDP", []string{"bar.example.com"}, true},
	} {
		t.Run(fmt.Sprintf("%s/%s/%s", tc.protocol, tc.listener, strings.Join(tc.route, ",")), func(t *testing.T) {
			l := listener{hostname: tc.listener, protocol: tc.protocol}
			if got := hostnamesIntersect(l, tc.route); got != tc.want {
				t.Errorf("hostnamesIntersect(%q %s, %v) = %v, want %v", tc.listener, tc.protocol, tc.route, got, tc.want)
			}
		})
	}
}

// TestHostnameAttachment: a route reaches the policies of only the listeners its hostnames
// intersect; with none on a Gateway it has no path through it.
func TestHostnameAttachment(t *testing.T) {
	topo := `
apiVersion: v1
kind: Namespace
metadata: {name: h}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gc}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: h}
spec:
  gatewayClassName: gc
  listeners:
  - {name: foo, port: 80, protocol: HTTP, hostname: foo.example.com}
  - {name: wild, port: 80, protocol: HTTP, hostname: "*.example.com"}
  - {name: any, port: 8080, protocol: HTTP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: other, namespace: h}
spec:
  gatewayClassName: gc
  listeners:
  - {name: net, port: 80, protocol: HTTP, hostname: "*.example.net"}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: bar, namespace: h}
spec:
  parentRefs: [{name: gw}, {name: other}]
  hostnames: [bar.example.com]
  rules: [{backendRefs: [{name: svc}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: all, namespace: h}
spec:
  parentRefs: [{name: gw}]
---
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: h}
`
	pols := ""
	for _, l := range []string{"foo", "wild", "any"} {
		pols += fmt.Sprintf(`---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: p-%[1]s, namespace: h}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: %[1]s}]
  attempts: 1
`, l)
	}
	pols += `---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: p-other, namespace: h}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: other}]
  attempts: 2
`
	got := world(t, topo, pols)
	vias := func(key Key, kind string) []string {
		var out []string
		for _, e := range effAt(t, got, key, kind, retryK).Effective {
			out = append(out, viaString(e.Via))
		}
		sort.Strings(out)
		return out
	}
	for _, tc := range []struct {
		key  Key
		kind string
		want []string
	}{
		// bar.example.com: not foo.example.com; *.example.com and the hostname-less listener;
		// not *.example.net, so nothing of Gateway other.
		{Key{"h", "bar"}, "HTTPRoute", []string{"[Gateway/gw#any]", "[Gateway/gw#wild]"}},
		{Key{"h", "svc"}, "Service", []string{"[Gateway/gw#any]", "[Gateway/gw#wild]"}},
		// No hostnames: every listener of gw.
		{Key{"h", "all"}, "HTTPRoute", []string{"[Gateway/gw#any]", "[Gateway/gw#foo]", "[Gateway/gw#wild]"}},
	} {
		if g := vias(tc.key, tc.kind); strings.Join(g, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%v: vias %v, want %v", tc.key, g, tc.want)
		}
	}
}

package topology

import (
	"fmt"
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
			l := Listener{Hostname: tc.listener, Protocol: tc.protocol}
			if got := HostnamesIntersect(l, tc.route); got != tc.want {
				t.Errorf("HostnamesIntersect(%q %s, %v) = %v, want %v", tc.listener, tc.protocol, tc.route, got, tc.want)
			}
		})
	}
}

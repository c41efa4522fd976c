package compute

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// hostnameTopology has Gateway gw with listeners for foo.example.com, *.example.com and any
// hostname, Gateway other with one for *.example.net, a route for bar.example.com attached to both
// and a hostname-less route attached to gw.
const hostnameTopology = `
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

// hostnamePolicies targets each listener of gw and all of Gateway other.
func hostnamePolicies() string {
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
	return pols
}

// TestHostnameAttachment: a route reaches the policies of only the listeners its hostnames
// intersect; with none on a Gateway it has no path through it.
func TestHostnameAttachment(t *testing.T) {
	got := world(t, hostnameTopology, hostnamePolicies())
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

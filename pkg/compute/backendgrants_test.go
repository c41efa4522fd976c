package compute

import (
	"strings"
	"testing"
)

// crossNamespaceBackendsTopology has a route in namespace app whose rule sends to Service svc
// and mirrors to Service shadow, both in namespace be.
const crossNamespaceBackendsTopology = `
apiVersion: v1
kind: Namespace
metadata: {name: app}
---
apiVersion: v1
kind: Namespace
metadata: {name: be}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gc}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: app}
spec:
  gatewayClassName: gc
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: rt, namespace: app}
spec:
  parentRefs: [{name: gw}]
  rules:
  - name: main
    backendRefs: [{name: svc, namespace: be}]
    filters: [{type: RequestMirror, requestMirror: {backendRef: {name: shadow, namespace: be}}}]
---
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: be}
---
apiVersion: v1
kind: Service
metadata: {name: shadow, namespace: be}
`

// crossNamespaceBackendsPolicy targets the route's Gateway.
const crossNamespaceBackendsPolicy = `
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: gwp, namespace: app}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  attempts: 3
`

// backendReferenceGrant is a ReferenceGrant in namespace be from fromKind routes in fromNS to
// Services, to the one named toName when it is not empty.
func backendReferenceGrant(fromKind, fromNS, toName string) string {
	g := `---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: g, namespace: be}
spec:
  from: [{group: gateway.networking.k8s.io, kind: ` + fromKind + `, namespace: ` + fromNS + `}]
  to: [{group: "", kind: Service`
	if toName != "" {
		g += `, name: ` + toName
	}
	return g + `}]
`
}

// TestCrossNamespaceBackends: a backendRef or RequestMirror backend in another namespace hangs
// under the rule only when a ReferenceGrant in the backend's namespace lets the route's kind
// from the route's namespace refer to it (Gateway API v1.6 apis/v1/shared_types.go
// BackendObjectReference and apis/v1beta1/referencegrant_types.go: from group/kind/namespace,
// to group/kind and an optional name).
func TestCrossNamespaceBackends(t *testing.T) {
	for _, tc := range []struct {
		name        string
		grant       string
		svc, shadow bool // reached by the Gateway policy
	}{
		{"no grant", "", false, false},
		{"grant for the route's kind and namespace", backendReferenceGrant("HTTPRoute", "app", ""), true, true},
		{"grant for another kind", backendReferenceGrant("GRPCRoute", "app", ""), false, false},
		{"grant for another namespace", backendReferenceGrant("HTTPRoute", "other", ""), false, false},
		{"grant naming one Service", backendReferenceGrant("HTTPRoute", "app", "svc"), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := world(t, crossNamespaceBackendsTopology+tc.grant, crossNamespaceBackendsPolicy)
			for _, c := range []struct {
				name string
				want bool
			}{{"svc", tc.svc}, {"shadow", tc.shadow}} {
				_, reached := got[Key{"be", c.name}]
				if reached != c.want {
					t.Errorf("be/%s reached: %v, want %v", c.name, reached, c.want)
				}
				if reached {
					e := onlyEffective(t, effAt(t, got, Key{"be", c.name}, "Service", retryK), "")
					if v := viaString(e.Via); !strings.Contains(v, "Gateway/gw") {
						t.Errorf("be/%s via %s", c.name, v)
					}
				}
			}
		})
	}
}

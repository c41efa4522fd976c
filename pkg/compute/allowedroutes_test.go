package compute

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

// allowedRoutesTopology has one Gateway whose listeners admit routes by namespace, label selector,
// route kind and protocol, plus a ListenerSet in another namespace, routes in three namespaces and a
// granted cross-namespace mirror backend.
const allowedRoutesTopology = `
apiVersion: v1
kind: Namespace
metadata: {name: infra}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-a, labels: {expose: "yes"}}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-b}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gc}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: gc
  allowedListeners: {namespaces: {from: All}}
  listeners:
  - {name: same, port: 80, protocol: HTTP}
  - name: sel
    port: 81
    protocol: HTTP
    allowedRoutes: {namespaces: {from: Selector, selector: {matchLabels: {expose: "yes"}}}}
  - name: all-grpc
    port: 82
    protocol: HTTP
    allowedRoutes: {namespaces: {from: All}, kinds: [{kind: GRPCRoute}]}
  - {name: tcp, port: 83, protocol: TCP, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: ls, namespace: team-b}
spec:
  parentRef: {name: gw, namespace: infra}
  listeners: [{name: extra, port: 90, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ra, namespace: team-a}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules: [{filters: [{type: RequestMirror, requestMirror: {backendRef: {name: mirror, namespace: infra}}}], backendRefs: [{name: app}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: rb, namespace: team-b}
spec:
  parentRefs: [{name: gw, namespace: infra}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: rg, namespace: team-b}
spec:
  parentRefs: [{name: gw, namespace: infra}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: rls, namespace: team-b}
spec:
  parentRefs: [{kind: ListenerSet, name: ls}]
---
apiVersion: v1
kind: Service
metadata: {name: app, namespace: team-a}
---
apiVersion: v1
kind: Service
metadata: {name: mirror, namespace: infra}
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: mirror-from-team-a, namespace: infra}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: team-a}]
  to: [{group: "", kind: Service, name: mirror}]
`

// allowedRoutesPolicies targets each of the Gateway's listeners, the ListenerSet and the Gateway's
// namespace.
const allowedRoutesPolicies = `
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: p, namespace: infra}
spec:
  targetRefs:
  - {group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: same}
  - {group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: sel}
  - {group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: all-grpc}
  - {group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: tcp}
  x: 1
---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: lsp, namespace: team-b}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: ListenerSet, name: ls}]
  y: 2
---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: nsp, namespace: infra}
spec:
  targetRefs: [{group: "", kind: Namespace, name: infra}]
  z: 3
`

// retryVias lists, as viaString renders them, the paths by which the RetryPolicy reaches the
// object of that kind at key; nil when the object or its RetryPolicy entry is absent.
func retryVias(got map[Key]runtime.Object, key Key, kind string) []string {
	obj, ok := got[key]
	if !ok {
		return nil
	}
	tp := findTP(obj, kind, retryG, retryK)
	if tp == nil {
		return nil
	}
	var out []string
	for _, e := range tp.Effective {
		out = append(out, viaString(e.Via))
	}
	return out
}

func TestAllowedRoutesAndListenerSets(t *testing.T) {
	got := world(t, allowedRoutesTopology, allowedRoutesPolicies)
	check := func(key Key, kind string, want ...string) {
		t.Helper()
		if g := strings.Join(retryVias(got, key, kind), " "); g != strings.Join(want, " ") {
			t.Errorf("%v %s: vias %s, want %s", key, kind, g, strings.Join(want, " "))
		}
	}
	// team-a is selected by "sel" (labels), not admitted by "same".
	check(Key{"team-a", "ra"}, "HTTPRoute", "[Namespace/infra Gateway/gw#sel]")
	// Backends: app (team-a) and the mirror backend (infra, already on path; granted).
	check(Key{"team-a", "app"}, "Service", "[Namespace/infra Gateway/gw#sel]")
	check(Key{"infra", "mirror"}, "Service", "[Namespace/infra Gateway/gw#sel]")
	// team-b HTTPRoute: nothing admits it (sel needs the label, all-grpc
	// only GRPCRoute, tcp only TCPRoute).
	check(Key{"team-b", "rb"}, "HTTPRoute")
	check(Key{"team-b", "rg"}, "GRPCRoute", "[Namespace/infra Gateway/gw#all-grpc]")
	// ListenerSet listeners sit beside the Gateway's own.
	check(Key{"team-b", "rls"}, "HTTPRoute", "[Namespace/infra ListenerSet/ls]")
	check(Key{"team-b", "ls"}, "ListenerSet", "[Namespace/infra ListenerSet/ls]")
}

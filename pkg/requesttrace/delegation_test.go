package requesttrace

import (
	"strings"
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// delegationTopo: Gateway kg/gw of kgateway's class (and the same route on Gateway kg/other of
// another class); HTTPRoute parent (example.com) delegates /a to every HTTPRoute of namespace
// kg (rule "deleg") and sends the rest to svc; child (no hostnames) has /a/1 to svc (rule
// "one") and /random (not under /a: dropped, as kgateway's
// testutils/inputs/delegation/discard_invalid_child_matches.yaml); a ColorPolicy on each route.
var delegationTopo = `
---
{apiVersion: gateway.networking.k8s.io/v1, kind: GatewayClass, metadata: {name: kgw}, spec: {controllerName: kgateway.dev/kgateway}}
---
{apiVersion: gateway.networking.k8s.io/v1, kind: GatewayClass, metadata: {name: gc}, spec: {controllerName: example.com/c}}
---
{apiVersion: gateway.networking.k8s.io/v1, kind: Gateway, metadata: {name: gw, namespace: kg}, spec: {gatewayClassName: kgw, listeners: [{name: http, port: 80, protocol: HTTP}]}}
---
{apiVersion: gateway.networking.k8s.io/v1, kind: Gateway, metadata: {name: other, namespace: kg}, spec: {gatewayClassName: gc, listeners: [{name: http, port: 80, protocol: HTTP}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: parent, namespace: kg}
spec:
  parentRefs: [{name: gw}, {name: other}]
  hostnames: [example.com]
  rules:
  - {name: deleg, matches: [{path: {type: PathPrefix, value: /a}}], backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: "*", namespace: kg}]}
  - {name: rest, backendRefs: [{name: svc, port: 80}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: child, namespace: kg}
spec:
  rules:
  - {name: one, matches: [{path: {type: PathPrefix, value: /a/1}}], backendRefs: [{name: svc, port: 80}]}
  - {name: random, matches: [{path: {type: PathPrefix, value: /random}}], backendRefs: [{name: svc, port: 80}]}
---
{apiVersion: v1, kind: Service, metadata: {name: svc, namespace: kg}, spec: {ports: [{name: http, port: 80}]}}
` + colorPolicy(colorG, "kg", "pp", "HTTPRoute", "parent", "", "color: red, size: 1") +
	colorPolicy(colorG, "kg", "cp", "HTTPRoute", "child", "", "color: blue")

func TestTraceDelegation(t *testing.T) {
	crds := readFile(t, "../../test/scenarios", "crds", "colorpolicies.yaml")
	req := func(g, path string) v1alpha1.RequestTraceSpec {
		return v1alpha1.RequestTraceSpec{Gateway: gw("kg", g), Request: tracedReq("example.com", path)}
	}
	for _, tc := range []traceCase{
		{name: "a request under the delegating rule ends at the child's rule", docs: []string{delegationTopo}, spec: req("gw", "/a/1/x"),
			check: func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := matched(t, s, err, "child", 0, "one")
				if !strings.Contains(m.Message, "delegated by rule deleg of HTTPRoute kg/parent") {
					t.Errorf("message %q does not name the delegating rule", m.Message)
				}
				expect(t, policyOf(t, m.Policies, colorG, nil), "", `{"color":"blue"}`,
					[]string{"HTTPRoute/parent", "HTTPRoute/child"}, "pp", "cp")
			}},
		{name: "the delegating rule itself matches nothing", docs: []string{delegationTopo}, spec: req("gw", "/a"),
			check: func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				matched(t, s, err, "parent", 1, "rest")
			}},
		{name: "a child match not under the parent's is dropped", docs: []string{delegationTopo}, spec: req("gw", "/random"),
			check: func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				matched(t, s, err, "parent", 1, "rest")
			}},
		{name: "another implementation's Gateway does not delegate", docs: []string{delegationTopo}, spec: req("other", "/a/1"),
			check: func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				matched(t, s, err, "parent", 0, "deleg")
			}},
	} {
		t.Run(tc.name, func(t *testing.T) { runTraceCase(t, crds, tc) })
	}
}

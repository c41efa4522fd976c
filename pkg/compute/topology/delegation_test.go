package topology

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// acceptCases: a child (its spec and annotations) below the parent of TestDelegationAcceptsChild,
// named by ref ("child" when empty), on a Gateway of controller (kgateway's when empty).
var acceptCases = []struct {
	name, child, ref, controller string
	ann                          map[string]string
	want                         bool
}{
	{name: "no parentRefs, matches under the parent's", want: true,
		child: `{rules: [{matches: [{path: {value: /a/1}, headers: [{name: h, value: v}], method: GET}]}]}`},
	{name: "wildcard name", ref: "*", want: true,
		child: `{rules: [{matches: [{path: {value: /a/1}, headers: [{type: Exact, name: h, value: v}], method: GET}]}]}`},
	{name: "parentRefs name the parent", want: true,
		child: `{parentRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: parent, namespace: infra}],
		  rules: [{matches: [{path: {value: /a/1}, headers: [{name: h, value: v}], method: GET}]}]}`},
	{name: "parentRefs name another route",
		child: `{parentRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: invalid, namespace: infra}],
		  rules: [{matches: [{path: {value: /a/1}, headers: [{name: h, value: v}], method: GET}]}]}`},
	{name: "parentRefs name only a Gateway",
		child: `{parentRefs: [{name: gw, namespace: infra}],
		  rules: [{matches: [{path: {value: /a/1}, headers: [{name: h, value: v}], method: GET}]}]}`},
	{name: "hostnames set",
		child: `{hostnames: [foo.com], rules: [{matches: [{path: {value: /a/1}, headers: [{name: h, value: v}], method: GET}]}]}`},
	{name: "path not under the parent's",
		child: `{rules: [{matches: [{path: {value: /random}, headers: [{name: h, value: v}], method: GET}]}]}`},
	{name: "one rule of two valid", want: true,
		child: `{rules: [{matches: [{path: {value: /random}}]}, {matches: [{path: {value: /a/2}, headers: [{name: h, value: v}], method: GET}]}]}`},
	{name: "parent header missing",
		child: `{rules: [{matches: [{path: {value: /a/1}, method: GET}]}]}`},
	{name: "header of another type",
		child: `{rules: [{matches: [{path: {value: /a/1}, headers: [{type: RegularExpression, name: h, value: v}], method: GET}]}]}`},
	{name: "another method",
		child: `{rules: [{matches: [{path: {value: /a/1}, headers: [{name: h, value: v}], method: POST}]}]}`},
	{name: "no matches: PathPrefix / by default",
		child: `{rules: [{backendRefs: [{name: svc}]}]}`},
	{name: "inherit-parent-matcher accepts any match", want: true,
		ann:   map[string]string{InheritMatcherAnnotation: "true"},
		child: `{rules: [{matches: [{path: {value: /random}}]}]}`},
	{name: "not a kgateway Gateway", controller: "example.com/other",
		child: `{rules: [{matches: [{path: {value: /a/1}, headers: [{name: h, value: v}], method: GET}]}]}`},
}

// Which child routes a delegating rule accepts, from kgateway v2.2.0:
// pkg/kgateway/utils/delegation/delegation_test.go (parentRefs; IsDelegatedRouteMatch's
// path, header, query and method cases) and the golden inputs of
// pkg/kgateway/translator/gateway/testutils/inputs/delegation/ (basic.yaml,
// basic_parentref_match.yaml, basic_parentref_mismatch.yaml, basic_invalid_hostname.yaml,
// discard_invalid_child_matches.yaml, inherit_parentref.yaml, cyclic1.yaml): a child sits
// below the parent's rule exactly when the golden output has its routes.
func TestDelegationAcceptsChild(t *testing.T) {
	const parent = `
parentRefs: [{name: gw}]
hostnames: [example.com]
rules:
- name: deleg
  matches:
  - path: {type: PathPrefix, value: /a}
    headers: [{name: h, value: v}]
    method: GET
  backendRefs:
  - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: "%s", namespace: a}
`
	for _, tc := range acceptCases {
		t.Run(tc.name, func(t *testing.T) {
			ref, ctrl := tc.ref, tc.controller
			if ref == "" {
				ref = "child"
			}
			if ctrl == "" {
				ctrl = KgatewayController
			}
			gr := delegationGraph(t, ctrl)
			applyRoute(t, gr, "infra", "parent", fmt.Sprintf(parent, ref), nil)
			applyRoute(t, gr, "a", "child", tc.child, tc.ann)
			child := NodeID{Group: GatewayGroup, Kind: "HTTPRoute", Namespace: "a", Name: "child"}
			rule := NodeID{Group: GatewayGroup, Kind: "HTTPRoute", Namespace: "infra", Name: "parent", Section: "deleg"}
			parents := gr.AppendParents(nil, child)
			if got := slices.Contains(parents, rule); got != tc.want {
				t.Errorf("child below the delegating rule: %v, want %v (parents %v)", got, tc.want, parents)
			}
			var below bool
			gr.children(rule, func(c NodeID) { below = below || c == child })
			if below != tc.want {
				t.Errorf("rule's children hold the child: %v, want %v", below, tc.want)
			}
		})
	}
}

// cyclic1.yaml: a child delegating back to its parent; the delegation closing the cycle is
// dropped, the other kept.
func TestDelegationCycle(t *testing.T) {
	gr := delegationGraph(t, KgatewayController)
	applyRoute(t, gr, "infra", "parent", `{parentRefs: [{name: gw}], rules: [{name: r, matches: [{path: {value: /a}}],
	  backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: child, namespace: a}]}]}`, nil)
	applyRoute(t, gr, "a", "child", `{rules: [{name: r, matches: [{path: {value: /a/1}}],
	  backendRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: parent, namespace: infra}]}]}`, nil)
	parent := NodeID{Group: GatewayGroup, Kind: "HTTPRoute", Namespace: "infra", Name: "parent"}
	child := NodeID{Group: GatewayGroup, Kind: "HTTPRoute", Namespace: "a", Name: "child"}
	if got := gr.Delegation().Parents(child); len(got) != 1 || got[0].Object() != parent {
		t.Errorf("child's delegating rules %v, want parent's", got)
	}
	if got := gr.Delegation().Parents(parent); len(got) != 0 {
		t.Errorf("parent's delegating rules %v, want none (the cycle)", got)
	}
}

func delegationGraph(t *testing.T, controller string) *Graph {
	t.Helper()
	gr := NewGraph()
	gr.ApplyNamespace("infra", true, nil)
	gr.ApplyNamespace("a", true, nil)
	gr.ApplyGatewayClass(NodeID{Group: GatewayGroup, Kind: "GatewayClass", Name: "gc"}, true, controller)
	gr.ApplyGateway(NodeID{Group: GatewayGroup, Kind: "Gateway", Namespace: "infra", Name: "gw"}, true, parseYAML(t,
		`{gatewayClassName: gc, listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]}`))
	return gr
}

func applyRoute(t *testing.T, gr *Graph, ns, name, spec string, ann map[string]string) {
	t.Helper()
	var touched []NodeID
	gr.ApplyRoute(NodeID{Group: GatewayGroup, Kind: "HTTPRoute", Namespace: ns, Name: name}, true, parseYAML(t, spec), ann, time.Time{}, &touched)
}

func parseYAML(t *testing.T, s string) map[string]interface{} {
	t.Helper()
	var m map[string]interface{}
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

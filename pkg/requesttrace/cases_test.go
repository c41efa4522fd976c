package requesttrace

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// Groups of the scenarios' inherited ColorPolicy and of their Direct one
// (test/scenarios/crds/colorpolicies.yaml).
const (
	colorG  = "colors.example.com"
	directG = "direct.colors.example.com"
	gwAPI   = "apiVersion: gateway.networking.k8s.io/v1\n"
)

// gcDoc: GatewayClass gc of a controller not known to bind to the most
// specific host.
const gcDoc = gwAPI + "kind: GatewayClass\nmetadata: {name: gc}\nspec: {controllerName: example.com/c}\n"

// traceTopo: gc; Gateway app/gw (listeners http:80, and foo:80 for
// foo.example.com; routes of any namespace, ListenerSets of its own);
// HTTPRoute rt with rules "a" (PathPrefix /a) and an unnamed one (PathPrefix
// /b), both to Service svc:80 (port "http").
const traceTopo = gcDoc + `---
{apiVersion: v1, kind: Namespace, metadata: {name: app}}
---
` + gwAPI + `kind: Gateway
metadata: {name: gw, namespace: app}
spec:
  gatewayClassName: gc
  allowedListeners: {namespaces: {from: Same}}
  listeners:
  - {name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}
  - {name: foo, port: 80, protocol: HTTP, hostname: foo.example.com, allowedRoutes: {namespaces: {from: All}}}
---
` + gwAPI + `kind: HTTPRoute
metadata: {name: rt, namespace: app}
spec:
  parentRefs: [{name: gw}]
  rules:
  - {name: a, matches: [{path: {type: PathPrefix, value: /a}}], backendRefs: [{name: svc, port: 80}]}
  - {matches: [{path: {type: PathPrefix, value: /b}}], backendRefs: [{name: svc, port: 80}]}
---
{apiVersion: v1, kind: Service, metadata: {name: svc, namespace: app}, spec: {ports: [{name: http, port: 80}]}}
`

// colorPolicy is a ColorPolicy of group g in namespace ns targeting one
// object (its section, when not "") with the given spec fields.
func colorPolicy(g, ns, name, kind, target, section, fields string) string {
	tg := "gateway.networking.k8s.io"
	if kind == "Service" {
		tg = ""
	}
	ref := `{group: "` + tg + `", kind: ` + kind + `, name: ` + target
	if section != "" {
		ref += `, sectionName: ` + section
	}
	return "\n---\n{apiVersion: " + g + "/v1, kind: ColorPolicy, metadata: {name: " + name + ", namespace: " + ns +
		"}, spec: {targetRefs: [" + ref + "}], " + fields + "}}\n"
}

// route is an HTTPRoute in app on gw for host, with one rule to backend.
func route(name, host, backend string) string {
	return "\n---\n" + gwAPI + "kind: HTTPRoute\nmetadata: {name: " + name + ", namespace: app}\nspec: {parentRefs: [{name: gw}], hostnames: [" +
		host + "], rules: [{backendRefs: [" + backend + "]}]}\n"
}

// crossNS: HTTPRoute xr in app sending to Service be/bsvc, which a
// ColorPolicy targets.
var crossNS = route("xr", "x.example.com", "{name: bsvc, namespace: be, port: 80}") + `---
{apiVersion: v1, kind: Service, metadata: {name: bsvc, namespace: be}, spec: {ports: [{name: web, port: 80}]}}` +
	colorPolicy(colorG, "be", "bp", "Service", "bsvc", "", "color: teal")

const grantBE = `
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: from-app, namespace: be}
spec: {from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: app}], to: [{group: "", kind: Service}]}
`

// hostRoutes: Gateways eg (Envoy Gateway's class) and other (gc), each
// with HTTPRoutes foo-a (foo.example.com, /a only) and any-root (any host, /).
const hostRoutes = `
---
{apiVersion: gateway.networking.k8s.io/v1, kind: GatewayClass, metadata: {name: envoy}, spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}}
---
{apiVersion: gateway.networking.k8s.io/v1, kind: Gateway, metadata: {name: eg, namespace: hosts}, spec: {gatewayClassName: envoy, listeners: [{name: http, port: 80, protocol: HTTP}]}}
---
{apiVersion: gateway.networking.k8s.io/v1, kind: Gateway, metadata: {name: other, namespace: hosts}, spec: {gatewayClassName: gc, listeners: [{name: http, port: 80, protocol: HTTP}]}}
---
{apiVersion: gateway.networking.k8s.io/v1, kind: HTTPRoute, metadata: {name: foo-a, namespace: hosts}, spec: {parentRefs: [{name: eg}, {name: other}],
 hostnames: [foo.example.com], rules: [{matches: [{path: {type: PathPrefix, value: /a}}], backendRefs: [{name: s, port: 80}]}]}}
---
{apiVersion: gateway.networking.k8s.io/v1, kind: HTTPRoute, metadata: {name: any-root, namespace: hosts}, spec: {parentRefs: [{name: eg}, {name: other}],
 rules: [{matches: [{path: {type: PathPrefix, value: /}}], backendRefs: [{name: s, port: 80}]}]}}
`

// hidden: Gateway infra/ig (h.example.com), HTTPRoute secretns/secretroute
// on it (PathPrefix /s), sending to Service be/bsvc (granted).
const hidden = `
---
{apiVersion: gateway.networking.k8s.io/v1, kind: Gateway, metadata: {name: ig, namespace: infra}, spec: {gatewayClassName: gc,
 listeners: [{name: http, port: 80, protocol: HTTP, hostname: h.example.com, allowedRoutes: {namespaces: {from: All}}}]}}
---
{apiVersion: gateway.networking.k8s.io/v1, kind: HTTPRoute, metadata: {name: secretroute, namespace: secretns}, spec: {parentRefs: [{name: ig, namespace: infra}],
 rules: [{matches: [{path: {type: PathPrefix, value: /s}}], backendRefs: [{name: bsvc, namespace: be, port: 80}]}]}}
---
{apiVersion: v1, kind: Service, metadata: {name: bsvc, namespace: be}, spec: {ports: [{port: 80}]}}
---
{apiVersion: gateway.networking.k8s.io/v1beta1, kind: ReferenceGrant, metadata: {name: from-secretns, namespace: be},
 spec: {from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: secretns}], to: [{group: "", kind: Service}]}}
`

// listenerSet: ListenerSet app/ls on gw (listener extra:8080), HTTPRoute lr
// on it, and a ColorPolicy on the ListenerSet.
var listenerSet = `
---
{apiVersion: gateway.networking.k8s.io/v1, kind: ListenerSet, metadata: {name: ls, namespace: app},
 spec: {parentRef: {name: gw}, listeners: [{name: extra, port: 8080, protocol: HTTP}]}}
---
{apiVersion: gateway.networking.k8s.io/v1, kind: HTTPRoute, metadata: {name: lr, namespace: app},
 spec: {parentRefs: [{kind: ListenerSet, name: ls}], rules: [{backendRefs: [{name: svc, port: 80}]}]}}
` + colorPolicy(colorG, "app", "lsp", "ListenerSet", "ls", "", "color: olive")

const grpcRoute = `
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: gr, namespace: app}
spec:
  parentRefs: [{name: gw, sectionName: http}]
  hostnames: [grpc.example.com]
  rules:
  - {name: other, matches: [{method: {service: pkg.Svc, method: Other}}], backendRefs: [{name: svc, port: 80}]}
  - {name: method, matches: [{method: {type: Exact, service: pkg.Svc, method: Method}}], backendRefs: [{name: svc, port: 80}]}
`

type traceCase struct {
	name  string
	docs  []string
	spec  v1alpha1.RequestTraceSpec
	hide  string // a namespace the caller may not see
	check func(t *testing.T, s v1alpha1.RequestTraceStatus, err error)
}

func TestTraceCases(t *testing.T) {
	crds := readFile(t, "../../test/scenarios", "crds", "colorpolicies.yaml")
	req := func(host, path string) v1alpha1.TracedRequest { return v1alpha1.TracedRequest{Host: host, Path: path} }
	onGW := func(r v1alpha1.TracedRequest) v1alpha1.RequestTraceSpec {
		return v1alpha1.RequestTraceSpec{Gateway: gw("app", "gw"), Request: r}
	}
	anyGW := func(host, path string) v1alpha1.RequestTraceSpec {
		return v1alpha1.RequestTraceSpec{Request: req(host, path)}
	}
	sectionPolicies := colorPolicy(colorG, "app", "whole", "HTTPRoute", "rt", "", "color: blue") +
		colorPolicy(colorG, "app", "rule-a", "HTTPRoute", "rt", "a", "color: red")
	listenerPolicies := colorPolicy(colorG, "app", "gwp", "Gateway", "gw", "", "color: red") +
		colorPolicy(colorG, "app", "foop", "Gateway", "gw", "foo", "color: green")
	directPolicies := colorPolicy(directG, "app", "d-whole", "HTTPRoute", "rt", "", "shade: dark") +
		colorPolicy(directG, "app", "d-rule-a", "HTTPRoute", "rt", "a", "shade: light")
	svcRef := &v1alpha1.ObjectReference{Kind: "Service", Namespace: "app", Name: "svc"}

	cases := []traceCase{
		// 1. A policy on a named rule: that rule gets the section's entry, the
		// other rule the whole route's.
		{"named rule: section entry", []string{traceTopo, sectionPolicies}, onGW(req("bar.example.com", "/a/x")), "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := matched(t, s, err, "rt", 0, "a")
				expect(t, policyOf(t, m.Policies, colorG, nil), "a", `{"color":"red"}`, []string{"HTTPRoute/rt", "HTTPRoute/rt#a"}, "whole", "rule-a")
			}},
		{"other rule: whole-route entry", []string{traceTopo, sectionPolicies}, onGW(req("bar.example.com", "/b")), "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := matched(t, s, err, "rt", 1, "")
				expect(t, policyOf(t, m.Policies, colorG, nil), "", `{"color":"blue"}`, []string{"HTTPRoute/rt"}, "whole")
			}},
		// 2. A policy on one listener section: each listener is its own context.
		{"listener http", []string{traceTopo, listenerPolicies}, onGW(req("bar.example.com", "/a")), "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := matched(t, s, err, "rt", 0, "a")
				if m.Listener != "http" {
					t.Errorf("listener %q", m.Listener)
				}
				expect(t, policyOf(t, m.Policies, colorG, nil), "", `{"color":"red"}`, []string{"Gateway/gw"}, "gwp")
				expect(t, policyOf(t, m.BackendPolicies, colorG, svcRef), "", `{"color":"red"}`, []string{"Gateway/gw"}, "gwp")
			}},
		{"listener foo", []string{traceTopo, listenerPolicies}, onGW(req("FOO.example.com:80", "/a")), "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := matched(t, s, err, "rt", 0, "a")
				if m.Listener != "foo" {
					t.Errorf("listener %q", m.Listener)
				}
				expect(t, policyOf(t, m.Policies, colorG, nil), "", `{"color":"green"}`, []string{"Gateway/gw", "Gateway/gw#foo"}, "gwp", "foop")
			}},
		// 3. Hostname fall-through (docs/research/hostname-fallthrough.md):
		// Envoy Gateway binds foo.example.com to its own virtual host, whose
		// rules do not match /b (a 404); the specification's precedence falls
		// through to the route without hostnames.
		{"Envoy Gateway: most specific host", []string{traceTopo, hostRoutes},
			v1alpha1.RequestTraceSpec{Gateway: gw("hosts", "eg"), Request: req("foo.example.com", "/b")}, "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := one(t, s, err)
				if m.Reason != "NoRuleMatches" || m.HostnameMatching != MostSpecificHost || m.Route != nil || m.Message == "" || s.Message == "" {
					t.Errorf("match %+v, message %q", m, s.Message)
				}
			}},
		{"other controller: precedence", []string{traceTopo, hostRoutes},
			v1alpha1.RequestTraceSpec{Gateway: gw("hosts", "other"), Request: req("foo.example.com", "/b")}, "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := matched(t, s, err, "any-root", 0, "")
				if m.HostnameMatching != Precedence || s.Message != "" {
					t.Errorf("match %+v, message %q", m, s.Message)
				}
			}},
		// 4. A cross-namespace backend, without and with a ReferenceGrant.
		{"cross-namespace backend, no grant", []string{traceTopo, crossNS}, onGW(req("x.example.com", "/")), "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := matched(t, s, err, "xr", 0, "")
				if len(m.Backends) != 1 || m.Backends[0].Ref.Namespace != "be" || !strings.Contains(m.Backends[0].Message, "ReferenceGrant") {
					t.Errorf("backends %+v", m.Backends)
				}
				if len(m.BackendPolicies) != 0 {
					t.Errorf("backend policies %+v", m.BackendPolicies)
				}
			}},
		{"cross-namespace backend, granted", []string{traceTopo, crossNS, grantBE}, onGW(req("x.example.com", "/")), "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := matched(t, s, err, "xr", 0, "")
				if len(m.Backends) != 1 || m.Backends[0].Message != "" {
					t.Errorf("backends %+v", m.Backends)
				}
				b := policyOf(t, m.BackendPolicies, colorG, &v1alpha1.ObjectReference{Kind: "Service", Namespace: "be", Name: "bsvc"})
				expect(t, b, "", `{"color":"teal"}`, []string{"Service/bsvc"}, "bp")
			}},
		// 5. A backendRef to a Service that does not exist.
		{"missing Service", []string{traceTopo, route("mr", "m.example.com", "{name: missing, port: 80}")}, onGW(req("m.example.com", "/")), "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := matched(t, s, err, "mr", 0, "")
				if len(m.Backends) != 1 || m.Backends[0].Message != "Service app/missing not found" {
					t.Errorf("backends %+v", m.Backends)
				}
			}},
		// A route written for the host but refused by the listener: the message says why.
		{"route not admitted", []string{traceTopo, `
---
{apiVersion: gateway.networking.k8s.io/v1, kind: Gateway, metadata: {name: same, namespace: app},
 spec: {gatewayClassName: gc, listeners: [{name: l, port: 81, protocol: HTTP}]}}
---
{apiVersion: gateway.networking.k8s.io/v1, kind: HTTPRoute, metadata: {name: outsider, namespace: other},
 spec: {parentRefs: [{name: same, namespace: app}], hostnames: [r.example.com]}}`},
			v1alpha1.RequestTraceSpec{Gateway: gw("app", "same"), Request: req("r.example.com", "/")}, "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := one(t, s, err)
				want := "HTTPRoute other/outsider names the Gateway but is not admitted: listener l admits routes of namespace app only"
				if m.Reason != "NoRoutes" || !strings.Contains(m.Message, want) {
					t.Errorf("match %+v, want the message to say %q", m, want)
				}
			}},
		// 6. What the caller may not see is not named.
		{"route hidden", []string{gcDoc, hidden}, anyGW("h.example.com", "/s"), "secretns",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := one(t, s, err)
				if m.Reason != ReasonRouteHidden || m.Route != nil || m.Rule != nil || len(m.Backends) != 0 || len(m.Policies) != 0 || s.Message != "" {
					t.Errorf("match %+v, message %q", m, s.Message)
				}
				notNamed(t, s, "secretns", "secretroute")
			}},
		{"route hidden, no rule matches: the message names no route", []string{gcDoc, hidden}, anyGW("h.example.com", "/zzz"), "secretns",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := one(t, s, err)
				if m.Reason != "NoRuleMatches" || m.Message == "" {
					t.Errorf("match %+v", m)
				}
				notNamed(t, s, "secretns", "secretroute")
			}},
		{"hidden Gateway without a listener on the port: not a match", []string{gcDoc, hidden},
			v1alpha1.RequestTraceSpec{Gateway: gw("infra", "ig"), Port: 9090, Request: req("h.example.com", "/")}, "infra",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				if err != nil || s.HiddenMatches != 0 || len(s.Matches) != 0 {
					t.Errorf("status %+v, err %v", s, err)
				}
			}},
		{"Gateway hidden, no rule matches: not named", []string{gcDoc, hidden}, anyGW("h.example.com", "/zzz"), "infra",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				if err != nil || s.HiddenMatches != 1 || len(s.Matches) != 0 || s.Message == "" {
					t.Errorf("status %+v, err %v", s, err)
				}
				notNamed(t, s, "infra")
			}},
		{"Gateway hidden, the request reaches a visible route: named, as that route's parentRefs do", []string{gcDoc, hidden}, anyGW("h.example.com", "/s"), "infra",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := matched(t, s, err, "secretroute", 0, "")
				if m.Gateway.Namespace != "infra" || s.HiddenMatches != 0 {
					t.Errorf("status %+v", s)
				}
			}},
		{"backend hidden", []string{gcDoc, hidden}, anyGW("h.example.com", "/s"), "be",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := matched(t, s, err, "secretroute", 0, "")
				if m.HiddenBackends != 1 || len(m.Backends) != 0 || len(m.BackendPolicies) != 0 {
					t.Errorf("match %+v", m)
				}
				notNamed(t, s, "bsvc")
			}},
		// 7. Gateways that do not take the request.
		{"named Gateway not found", []string{traceTopo}, v1alpha1.RequestTraceSpec{Gateway: gw("app", "nope"), Request: req("x", "/")}, "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				var nf ErrGatewayNotFound
				if !errors.As(err, &nf) || nf.Namespace != "app" || nf.Name != "nope" {
					t.Errorf("err %v", err)
				}
			}},
		{"no listener on port", []string{traceTopo}, v1alpha1.RequestTraceSpec{Gateway: gw("app", "gw"), Port: 9090, Request: req("bar.example.com", "/a")}, "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := one(t, s, err)
				if m.Reason != "NoListenerOnPort" || m.Message == "" || m.Gateway.Name != "gw" || m.Listener != "" || m.Route != nil {
					t.Errorf("match %+v", m)
				}
			}},
		{"host nobody serves", []string{gcDoc, hidden}, anyGW("nobody.example.org", "/"), "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				if err != nil || len(s.Matches) != 0 || s.HiddenMatches != 0 || !strings.Contains(s.Message, "nobody.example.org") {
					t.Errorf("status %+v, err %v", s, err)
				}
			}},
		// 8. A Direct policy kind on the route, and on its named rule.
		{"Direct kind on the route", []string{traceTopo, directPolicies}, onGW(req("bar.example.com", "/b")), "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := matched(t, s, err, "rt", 1, "")
				p := policyOf(t, m.Policies, directG, nil)
				if p.Class != v1alpha1.ClassDirect || p.SectionName != "" || !jsonEqual(p.Spec.Raw, `{"shade":"dark"}`) {
					t.Errorf("direct %s %q %s", p.Class, p.SectionName, p.Spec.Raw)
				}
			}},
		{"Direct kind on the named rule", []string{traceTopo, directPolicies}, onGW(req("bar.example.com", "/a")), "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := matched(t, s, err, "rt", 0, "a")
				p := policyOf(t, m.Policies, directG, nil)
				if p.Class != v1alpha1.ClassDirect || p.SectionName != "a" || !jsonEqual(p.Spec.Raw, `{"shade":"light"}`) {
					t.Errorf("direct %s %q %s", p.Class, p.SectionName, p.Spec.Raw)
				}
			}},
		// 9. A ListenerSet's listener takes the request.
		{"ListenerSet listener", []string{traceTopo, listenerSet},
			v1alpha1.RequestTraceSpec{Gateway: gw("app", "gw"), Port: 8080, Request: req("any.example.com", "/")}, "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := matched(t, s, err, "lr", 0, "")
				if m.Listener != "extra" || m.Port != 8080 || m.ListenerSet == nil || m.ListenerSet.Kind != "ListenerSet" || m.ListenerSet.Name != "ls" {
					t.Errorf("match %+v", m)
				}
				expect(t, policyOf(t, m.Policies, colorG, nil), "", `{"color":"olive"}`, []string{"ListenerSet/ls"}, "lsp")
			}},
		// 10. A gRPC call served by a GRPCRoute's method match.
		{"gRPC method", []string{traceTopo, grpcRoute},
			onGW(v1alpha1.TracedRequest{Host: "grpc.example.com", Path: "/pkg.Svc/Method", GRPC: true}), "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := matched(t, s, err, "gr", 1, "method")
				if m.Route.Kind != "GRPCRoute" || m.Rule.MatchIndex != 0 || len(m.Backends) != 1 || m.Backends[0].Ref.Name != "svc" {
					t.Errorf("route %+v rule %+v backends %+v", m.Route, m.Rule, m.Backends)
				}
			}},
		{"gRPC method no rule", []string{traceTopo, grpcRoute},
			onGW(v1alpha1.TracedRequest{Host: "grpc.example.com", Path: "/pkg.Svc/Nope", Headers: map[string]string{"Content-Type": "application/grpc+proto"}}), "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				if m := one(t, s, err); m.Reason != "NoRuleMatches" || m.Route != nil {
					t.Errorf("match %+v", m)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t, append([]string{crds}, tc.docs...)...)
			c := everything(e)
			if tc.hide != "" {
				c.Visible = func(ns string) bool { return ns != tc.hide }
			}
			s, err := Trace(e, tc.spec, c)
			tc.check(t, s, err)
		})
	}
}

// one returns the single match.
func one(t *testing.T, s v1alpha1.RequestTraceStatus, err error) v1alpha1.TraceMatch {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Matches) != 1 {
		t.Fatalf("matches: %+v (message %q)", s.Matches, s.Message)
	}
	return s.Matches[0]
}

// matched returns the single match, which must have matched rule (index,
// name) of route.
func matched(t *testing.T, s v1alpha1.RequestTraceStatus, err error, route string, rule int32, ruleName string) v1alpha1.TraceMatch {
	t.Helper()
	m := one(t, s, err)
	if m.Reason != "Matched" || m.Route == nil || m.Route.Name != route || m.Rule == nil {
		t.Fatalf("want %s matched, got %+v", route, m)
	}
	if m.Rule.Index != rule || m.Rule.Name != ruleName {
		t.Errorf("rule %+v, want %d %q", m.Rule, rule, ruleName)
	}
	return m
}

// policyOf returns the single entry of the ColorPolicy of group g (for
// backend, when set).
func policyOf(t *testing.T, ps []v1alpha1.TracePolicy, g string, backend *v1alpha1.ObjectReference) v1alpha1.TracePolicy {
	t.Helper()
	var found []v1alpha1.TracePolicy
	for _, p := range ps {
		if p.Group == g && p.Kind == "ColorPolicy" {
			found = append(found, p)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one %s entry, got %+v", g, ps)
	}
	if b := found[0].Backend; backend != nil && (b == nil || b.Kind != backend.Kind || b.Namespace != backend.Namespace || b.Name != backend.Name) {
		t.Errorf("entry for backend %+v, want %+v", b, backend)
	}
	return found[0]
}

// expect asserts an inherited entry: its section, spec, via (Kind/name or
// Kind/name#section) and the names of its sources on the path.
func expect(t *testing.T, p v1alpha1.TracePolicy, section, spec string, via []string, sources ...string) {
	t.Helper()
	var gotVia, gotSources []string
	for _, v := range p.Via {
		s := v.Kind + "/" + v.Name
		if v.SectionName != "" {
			s += "#" + v.SectionName
		}
		gotVia = append(gotVia, s)
	}
	for _, s := range p.Sources {
		gotSources = append(gotSources, s.Name)
	}
	if p.Class != v1alpha1.ClassInherited || p.SectionName != section || !jsonEqual(p.Spec.Raw, spec) ||
		strings.Join(gotVia, ",") != strings.Join(via, ",") || strings.Join(gotSources, ",") != strings.Join(sources, ",") {
		t.Errorf("entry %s section %q spec %s via %v sources %v; want section %q spec %s via %v sources %v",
			p.Class, p.SectionName, p.Spec.Raw, gotVia, gotSources, section, spec, via, sources)
	}
}

// notNamed asserts that no word appears in the status as JSON.
func notNamed(t *testing.T, s v1alpha1.RequestTraceStatus, words ...string) {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range words {
		if strings.Contains(string(b), w) {
			t.Errorf("status names %q: %s", w, b)
		}
	}
}

package requesttrace

import (
	"errors"
	"strings"
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// The cases of TestTraceCases, by topic, and the requests and policies they
// share.

// tracedReq is a request for host and path.
func tracedReq(host, path string) v1alpha1.TracedRequest {
	return v1alpha1.TracedRequest{Host: host, Path: path}
}

// onGW traces r on Gateway app/gw.
func onGW(r v1alpha1.TracedRequest) v1alpha1.RequestTraceSpec {
	return v1alpha1.RequestTraceSpec{Gateway: gw("app", "gw"), Request: r}
}

// anyGW traces a request for host and path on whichever Gateway takes it.
func anyGW(host, path string) v1alpha1.RequestTraceSpec {
	return v1alpha1.RequestTraceSpec{Request: tracedReq(host, path)}
}

var (
	sectionPolicies = colorPolicy(colorG, "app", "whole", "HTTPRoute", "rt", "", "color: blue") +
		colorPolicy(colorG, "app", "rule-a", "HTTPRoute", "rt", "a", "color: red")
	listenerPolicies = colorPolicy(colorG, "app", "gwp", "Gateway", "gw", "", "color: red") +
		colorPolicy(colorG, "app", "foop", "Gateway", "gw", "foo", "color: green")
	directPolicies = colorPolicy(directG, "app", "d-whole", "HTTPRoute", "rt", "", "shade: dark") +
		colorPolicy(directG, "app", "d-rule-a", "HTTPRoute", "rt", "a", "shade: light")
	svcRef = &v1alpha1.ObjectReference{Kind: "Service", Namespace: "app", Name: "svc"}
)

// ruleAndListenerTraceCases: the sections of a route and of a Gateway, each its own context.
func ruleAndListenerTraceCases() []traceCase {
	return []traceCase{
		// 1. A policy on a named rule: that rule gets the section's entry, the
		// other rule the whole route's.
		{"named rule: section entry", []string{traceTopo, sectionPolicies}, onGW(tracedReq("bar.example.com", "/a/x")), "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := matched(t, s, err, "rt", 0, "a")
				expect(t, policyOf(t, m.Policies, colorG, nil), "a", `{"color":"red"}`, []string{"HTTPRoute/rt", "HTTPRoute/rt#a"}, "whole", "rule-a")
			}},
		{"other rule: whole-route entry", []string{traceTopo, sectionPolicies}, onGW(tracedReq("bar.example.com", "/b")), "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := matched(t, s, err, "rt", 1, "")
				expect(t, policyOf(t, m.Policies, colorG, nil), "", `{"color":"blue"}`, []string{"HTTPRoute/rt"}, "whole")
			}},
		// 2. A policy on one listener section: each listener is its own context.
		{"listener http", []string{traceTopo, listenerPolicies}, onGW(tracedReq("bar.example.com", "/a")), "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := matched(t, s, err, "rt", 0, "a")
				if m.Listener != "http" {
					t.Errorf("listener %q", m.Listener)
				}
				expect(t, policyOf(t, m.Policies, colorG, nil), "", `{"color":"red"}`, []string{"Gateway/gw"}, "gwp")
				expect(t, policyOf(t, m.BackendPolicies, colorG, svcRef), "", `{"color":"red"}`, []string{"Gateway/gw"}, "gwp")
			}},
		{"listener foo", []string{traceTopo, listenerPolicies}, onGW(tracedReq("FOO.example.com:80", "/a")), "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := matched(t, s, err, "rt", 0, "a")
				if m.Listener != "foo" {
					t.Errorf("listener %q", m.Listener)
				}
				expect(t, policyOf(t, m.Policies, colorG, nil), "", `{"color":"green"}`, []string{"Gateway/gw", "Gateway/gw#foo"}, "gwp", "foop")
			}},
	}
}

// hostAndBackendTraceCases: hostname fall-through, backends across namespaces or missing, and a route the listener refuses.
func hostAndBackendTraceCases() []traceCase {
	return []traceCase{
		// 3. Hostname fall-through (docs/research/hostname-fallthrough.md):
		// Envoy Gateway binds foo.example.com to its own virtual host, whose
		// rules do not match /b (a 404); the specification's precedence falls
		// through to the route without hostnames.
		{"Envoy Gateway: most specific host", []string{traceTopo, hostRoutes},
			v1alpha1.RequestTraceSpec{Gateway: gw("hosts", "eg"), Request: tracedReq("foo.example.com", "/b")}, "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := one(t, s, err)
				if m.Reason != "NoRuleMatches" || m.HostnameMatching != MostSpecificHost || m.Route != nil || m.Message == "" || s.Message == "" {
					t.Errorf("match %+v, message %q", m, s.Message)
				}
			}},
		{"other controller: precedence", []string{traceTopo, hostRoutes},
			v1alpha1.RequestTraceSpec{Gateway: gw("hosts", "other"), Request: tracedReq("foo.example.com", "/b")}, "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := matched(t, s, err, "any-root", 0, "")
				if m.HostnameMatching != Precedence || s.Message != "" {
					t.Errorf("match %+v, message %q", m, s.Message)
				}
			}},
		// 4. A cross-namespace backend, without and with a ReferenceGrant.
		{"cross-namespace backend, no grant", []string{traceTopo, crossNS}, onGW(tracedReq("x.example.com", "/")), "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := matched(t, s, err, "xr", 0, "")
				if len(m.Backends) != 1 || m.Backends[0].Ref.Namespace != "be" || !strings.Contains(m.Backends[0].Message, "ReferenceGrant") {
					t.Errorf("backends %+v", m.Backends)
				}
				if len(m.BackendPolicies) != 0 {
					t.Errorf("backend policies %+v", m.BackendPolicies)
				}
			}},
		{"cross-namespace backend, granted", []string{traceTopo, crossNS, grantBE}, onGW(tracedReq("x.example.com", "/")), "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := matched(t, s, err, "xr", 0, "")
				if len(m.Backends) != 1 || m.Backends[0].Message != "" {
					t.Errorf("backends %+v", m.Backends)
				}
				b := policyOf(t, m.BackendPolicies, colorG, &v1alpha1.ObjectReference{Kind: "Service", Namespace: "be", Name: "bsvc"})
				expect(t, b, "", `{"color":"teal"}`, []string{"Service/bsvc"}, "bp")
			}},
		// 5. A backendRef to a Service that does not exist.
		{"missing Service", []string{traceTopo, route("mr", "m.example.com", "{name: missing, port: 80}")}, onGW(tracedReq("m.example.com", "/")), "",
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
			v1alpha1.RequestTraceSpec{Gateway: gw("app", "same"), Request: tracedReq("r.example.com", "/")}, "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := one(t, s, err)
				want := "HTTPRoute other/outsider names the Gateway but is not admitted: listener l admits routes of namespace app only"
				if m.Reason != "NoRoutes" || !strings.Contains(m.Message, want) {
					t.Errorf("match %+v, want the message to say %q", m, want)
				}
			}},
	}
}

// hiddenTraceCases: what the caller may not see is not named.
func hiddenTraceCases() []traceCase {
	return []traceCase{
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
			v1alpha1.RequestTraceSpec{Gateway: gw("infra", "ig"), Port: 9090, Request: tracedReq("h.example.com", "/")}, "infra",
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
	}
}

// gatewayAndKindTraceCases: Gateways that do not take the request, Direct kinds, ListenerSets and gRPC.
func gatewayAndKindTraceCases() []traceCase {
	return []traceCase{
		// 7. Gateways that do not take the request.
		{"named Gateway not found", []string{traceTopo}, v1alpha1.RequestTraceSpec{Gateway: gw("app", "nope"), Request: tracedReq("x", "/")}, "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				var nf ErrGatewayNotFound
				if !errors.As(err, &nf) || nf.Namespace != "app" || nf.Name != "nope" {
					t.Errorf("err %v", err)
				}
			}},
		{"no listener on port", []string{traceTopo}, v1alpha1.RequestTraceSpec{Gateway: gw("app", "gw"), Port: 9090, Request: tracedReq("bar.example.com", "/a")}, "",
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
		{"Direct kind on the route", []string{traceTopo, directPolicies}, onGW(tracedReq("bar.example.com", "/b")), "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := matched(t, s, err, "rt", 1, "")
				p := policyOf(t, m.Policies, directG, nil)
				if p.Class != v1alpha1.ClassDirect || p.SectionName != "" || !jsonEqual(p.Spec.Raw, `{"shade":"dark"}`) {
					t.Errorf("direct %s %q %s", p.Class, p.SectionName, p.Spec.Raw)
				}
				if p.Semantics != v1alpha1.SemanticsAssumed { // a kind found by label
					t.Errorf("semantics %q, want %s", p.Semantics, v1alpha1.SemanticsAssumed)
				}
			}},
		{"Direct kind on the named rule", []string{traceTopo, directPolicies}, onGW(tracedReq("bar.example.com", "/a")), "",
			func(t *testing.T, s v1alpha1.RequestTraceStatus, err error) {
				m := matched(t, s, err, "rt", 0, "a")
				p := policyOf(t, m.Policies, directG, nil)
				if p.Class != v1alpha1.ClassDirect || p.SectionName != "a" || !jsonEqual(p.Spec.Raw, `{"shade":"light"}`) {
					t.Errorf("direct %s %q %s", p.Class, p.SectionName, p.Spec.Raw)
				}
			}},
		// 9. A ListenerSet's listener takes the request.
		{"ListenerSet listener", []string{traceTopo, listenerSet},
			v1alpha1.RequestTraceSpec{Gateway: gw("app", "gw"), Port: 8080, Request: tracedReq("any.example.com", "/")}, "",
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
}

package requesttrace

import (
	"encoding/json"
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
	var cases []traceCase
	cases = append(cases, ruleAndListenerTraceCases()...)
	cases = append(cases, hostAndBackendTraceCases()...)
	cases = append(cases, hiddenTraceCases()...)
	cases = append(cases, gatewayAndKindTraceCases()...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runTraceCase(t, crds, tc) })
	}
}

// runTraceCase traces the case's request over an engine of the CRDs and its
// documents, hiding its namespace from the caller if it names one.
func runTraceCase(t *testing.T, crds string, tc traceCase) {
	e := newEngine(t, append([]string{crds}, tc.docs...)...)
	c := everything(e)
	if tc.hide != "" {
		c.Visible = func(ns string) bool { return ns != tc.hide }
	}
	s, err := Trace(e, tc.spec, c)
	tc.check(t, s, err)
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

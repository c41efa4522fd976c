package check

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

const (
	gwGroup = "gateway.networking.k8s.io"
	egGroup = "gateway.envoyproxy.io"
)

// fakeSource serves fixed EffectivePolicy entries and objects.
type fakeSource struct {
	reached  []Reached
	objects  []Object
	attached map[GatewayRef][]Object
	err      error
}

func (f *fakeSource) Effective(_ context.Context, namespace string) ([]Reached, error) {
	var out []Reached
	for _, r := range f.reached {
		if namespace == "" || r.Namespace == namespace {
			out = append(out, r)
		}
	}
	return out, f.err
}

func (f *fakeSource) Objects(_ context.Context, group *string, kind, namespace string) ([]Object, bool, error) {
	var out []Object
	for _, o := range f.objects {
		if o.Kind == kind && (group == nil || *group == o.Group) && (namespace == "" || namespace == o.Namespace) {
			out = append(out, o)
		}
	}
	return out, true, f.err
}

func (f *fakeSource) Attached(_ context.Context, gw GatewayRef) ([]Object, bool, error) {
	routes, ok := f.attached[gw]
	return routes, ok, f.err
}

func route(ns, name string, labels map[string]string) Object {
	return Object{Target: Target{Group: gwGroup, Kind: "HTTPRoute", Namespace: ns, Name: name}, Labels: labels}
}

func source(ns, name string, outcome v1alpha1.Outcome, message string) v1alpha1.PolicySource {
	return v1alpha1.PolicySource{Namespace: ns, Name: name, Outcome: outcome, Message: message}
}

func entry(spec string, via string, sources map[string]string) v1alpha1.EffectiveSpec {
	return v1alpha1.EffectiveSpec{
		Via:          []v1alpha1.ObjectReference{{Group: gwGroup, Kind: "Gateway", Namespace: "infra", Name: via}},
		Spec:         runtime.RawExtension{Raw: []byte(spec)},
		FieldSources: sources,
	}
}

// fixture: a public Gateway with two routes (web authenticated, api not;
// api has a Conflicted BackendTrafficPolicy), an internal route, and a
// Gateway reached by a kind of assumed semantics.
func fixture() *fakeSource {
	web, api, internal := route("app", "web", map[string]string{"tier": "public"}), route("app", "api", map[string]string{"tier": "public"}), route("app", "internal", nil)
	gateway := Object{Target: Target{Group: gwGroup, Kind: "Gateway", Namespace: "infra", Name: "public"}}
	security := v1alpha1.TargetPolicy{Group: egGroup, Kind: "SecurityPolicy", Semantics: "EnvoyGateway",
		Sources:   []v1alpha1.PolicySource{source("infra", "auth", v1alpha1.OutcomeEnforced, "")},
		Effective: []v1alpha1.EffectiveSpec{entry(`{"jwt":{"providers":[{"name":"corp"}]}}`, "public", map[string]string{"/jwt/providers": "infra/auth"})}}
	slow := v1alpha1.TargetPolicy{Group: egGroup, Kind: "BackendTrafficPolicy", Semantics: "EnvoyGateway",
		Sources:   []v1alpha1.PolicySource{source("app", "slow", v1alpha1.OutcomeEnforced, "")},
		Effective: []v1alpha1.EffectiveSpec{entry(`{"timeout":{"http":{"requestTimeout":"45s"}},"retries":3}`, "public", map[string]string{"/timeout/http/requestTimeout": "app/slow", "/retries": "app/slow"})}}
	fast := v1alpha1.TargetPolicy{Group: egGroup, Kind: "BackendTrafficPolicy", Semantics: "EnvoyGateway",
		Sources: []v1alpha1.PolicySource{
			source("app", "fast", v1alpha1.OutcomeEnforced, ""),
			source("app", "fast-too", v1alpha1.OutcomeConflicted, "app/fast targets the route already"),
		},
		Effective: []v1alpha1.EffectiveSpec{entry(`{"timeout":{"http":{"requestTimeout":"10s"}},"retries":"3"}`, "public", nil)}}
	color := v1alpha1.TargetPolicy{Group: "colors.example.com", Kind: "ColorPolicy", Semantics: v1alpha1.SemanticsAssumed,
		Sources: []v1alpha1.PolicySource{source("infra", "amber", v1alpha1.OutcomeOverridden, "beaten by infra/red")}}
	at := func(o Object, tps ...v1alpha1.TargetPolicy) Reached {
		return Reached{Namespace: o.Namespace, Target: v1alpha1.Target{Group: o.Group, Kind: o.Kind, Name: o.Name, Policies: tps}}
	}
	return &fakeSource{
		reached: []Reached{at(web, security, slow), at(api, fast), at(gateway, color),
			{Target: v1alpha1.Target{Kind: "Namespace", Name: "app", Policies: []v1alpha1.TargetPolicy{color}}}},
		objects:  []Object{web, api, internal, gateway},
		attached: map[GatewayRef][]Object{{Namespace: "infra", Name: "public"}: {api, web}, {Namespace: "infra", Name: "public", SectionName: "https"}: {web}},
	}
}

// TestEvaluate: expectations over the fixture, each result as a line:
// PASS or FAIL, the target, and the failures.
func TestEvaluate(t *testing.T) {
	for _, c := range evaluateCases {
		t.Run(c.name, func(t *testing.T) {
			docs, err := Parse("e.yaml", []byte(header+"expectations:\n- name: x"+c.expectation+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Evaluate(context.Background(), fixture(), docs)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rep.Results {
				got = append(got, line(r))
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// evaluateCases: a rule (after its name), and the lines of its results.
var evaluateCases = []struct {
	name, expectation string
	want              []string
}{
	{"every route on the public Gateway is authenticated", `
  targets: {kind: HTTPRoute, attachedTo: {namespace: infra, name: public}}
  policy:
    kind: SecurityPolicy
    outcomes: [Enforced]
    fields: [{path: /jwt/providers, exists: true}]`, []string{
		"FAIL HTTPRoute app/api: no SecurityPolicy reaches it",
		"PASS HTTPRoute app/web",
	}},
	{"a listener's routes", `
  targets: {attachedTo: {namespace: infra, name: public, sectionName: https}}
  policy: {kind: SecurityPolicy, group: gateway.envoyproxy.io}`, []string{"PASS HTTPRoute app/web"}},
	{"a Gateway that does not exist", `
  targets: {attachedTo: {namespace: infra, name: private}}
  policy: {kind: SecurityPolicy}`, []string{"FAIL (no target): there is no Gateway infra/private"}},
	{"a policy kind of another group", `
  targets: {kind: HTTPRoute, name: web}
  policy: {kind: SecurityPolicy, group: example.com}`, []string{"FAIL HTTPRoute app/web: no SecurityPolicy.example.com reaches it"}},
	{"no route timeout over 30s, where one is set", `
  targets: {kind: HTTPRoute}
  policy:
    kind: BackendTrafficPolicy
    optional: true
    fields: [{path: timeout.http.requestTimeout, max: 30s}]`, []string{
		"PASS HTTPRoute app/api",
		"PASS HTTPRoute app/internal",
		`FAIL HTTPRoute app/web: BackendTrafficPolicy.gateway.envoyproxy.io via Gateway infra/public: timeout.http.requestTimeout is "45s", beyond max 30s (set by app/slow)`,
	}},
	{"a minimum, and a field that is not set", `
  targets: {kind: HTTPRoute, namespace: app, selector: {matchLabels: {tier: public}}}
  policy:
    kind: BackendTrafficPolicy
    fields:
    - {path: timeout.http.requestTimeout, min: 20s}
    - {path: /timeout/tcp, exists: true}`, []string{
		`FAIL HTTPRoute app/api: BackendTrafficPolicy.gateway.envoyproxy.io via Gateway infra/public: timeout.http.requestTimeout is "10s", beyond min 20s; BackendTrafficPolicy.gateway.envoyproxy.io via Gateway infra/public: /timeout/tcp is not set`,
		`FAIL HTTPRoute app/web: BackendTrafficPolicy.gateway.envoyproxy.io via Gateway infra/public: /timeout/tcp is not set`,
	}},
	{"numbers: a bound, a string that is one, equality as JSON", `
  targets: {kind: HTTPRoute, selector: {matchExpressions: [{key: tier, operator: Exists}]}}
  policy:
    kind: BackendTrafficPolicy
    fields:
    - {path: retries, max: 2.5}
    - {path: retries, equals: 3.0}`, []string{
		`FAIL HTTPRoute app/api: BackendTrafficPolicy.gateway.envoyproxy.io via Gateway infra/public: retries is "3", beyond max 2.5; BackendTrafficPolicy.gateway.envoyproxy.io via Gateway infra/public: retries is "3", not 3`,
		`FAIL HTTPRoute app/web: BackendTrafficPolicy.gateway.envoyproxy.io via Gateway infra/public: retries is 3, beyond max 2.5 (set by app/slow)`,
	}},
	{"exists: false", `
  targets: {kind: HTTPRoute, name: web}
  policy:
    kind: BackendTrafficPolicy
    fields: [{path: retries, exists: false}, {path: nothing.here, exists: false}]`, []string{
		"FAIL HTTPRoute app/web: BackendTrafficPolicy.gateway.envoyproxy.io via Gateway infra/public: retries is set to 3 (set by app/slow)",
	}},
	{"an equals on an object", `
  targets: {kind: HTTPRoute, name: web}
  policy:
    kind: SecurityPolicy
    fields: [{path: jwt, equals: {providers: [{name: corp}]}}]`, []string{"PASS HTTPRoute app/web"}},
	{"nothing Conflicted or Invalid, every target", `
  targets: {}
  forbiddenOutcomes: [Conflicted, Invalid]`, []string{
		"PASS Namespace app",
		"FAIL HTTPRoute app/api: BackendTrafficPolicy.gateway.envoyproxy.io app/fast-too is Conflicted: app/fast targets the route already",
		"PASS HTTPRoute app/web",
		"PASS Gateway infra/public",
	}},
	{"an outcome no source has", `
  targets: {kind: Gateway}
  policy: {kind: ColorPolicy}`, []string{
		"FAIL Gateway infra/public: no ColorPolicy.colors.example.com is Enforced or PartiallyEnforced (found: infra/amber Overridden)",
	}},
	{"assumed semantics not allowed", `
  targets: {namespace: infra}
  allowAssumedSemantics: false`, []string{
		"FAIL Gateway infra/public: ColorPolicy.colors.example.com is computed with assumed semantics (no descriptor or profile describes it)",
	}},
	{"a cluster-scoped target", `
  targets: {group: "", kind: Namespace}
  policy: {kind: ColorPolicy, outcomes: [Overridden]}`, []string{"PASS Namespace app"}},
	{"no target matches", `
  targets: {kind: GRPCRoute}
  forbiddenOutcomes: [Invalid]`, []string{"FAIL (no target): no target matches GRPCRoute"}},
}

func line(r Result) string {
	s := "PASS"
	if !r.Holds {
		s = "FAIL"
	}
	if r.Target == nil {
		s += " (no target)"
	} else {
		s += " " + r.Target.String()
	}
	if len(r.Failures) > 0 {
		s += ": " + strings.Join(r.Failures, "; ")
	}
	return s
}

// TestEvaluateSourceError: a source that fails means the expectations
// could not be evaluated; the error names the expectation.
func TestEvaluateSourceError(t *testing.T) {
	docs, err := Parse("e.yaml", []byte(header+"expectations:\n- name: x\n  targets: {}\n  forbiddenOutcomes: [Invalid]\n"))
	if err != nil {
		t.Fatal(err)
	}
	src := fixture()
	src.err = errors.New("connection refused")
	if _, err := Evaluate(context.Background(), src, docs); err == nil || err.Error() != `e.yaml:4: expectation "x": connection refused` {
		t.Errorf("error %v", err)
	}
}

// TestOutputs: the text, JSON and JUnit forms of one report.
func TestOutputs(t *testing.T) {
	rep := Report{Results: []Result{
		{Expectation: "a", File: "e.yaml", Line: 4, Target: &Target{Kind: "HTTPRoute", Namespace: "app", Name: "web"}, Holds: true},
		{Expectation: "a", File: "e.yaml", Line: 4, Target: &Target{Kind: "HTTPRoute", Namespace: "app", Name: "api"}, Failures: []string{"no X reaches it", "and more"}},
		{Expectation: "b", File: "e.yaml", Line: 9, Failures: []string{"no target matches GRPCRoute"}},
		{Expectation: "c", File: "e.yaml", Line: 12, Target: &Target{Kind: "Gateway", Namespace: "infra", Name: "gw"}, Failures: []string{"X infra/p is Conflicted: \x1b[31mred\x1b[0m"}},
	}}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	wantText := `PASS  a  HTTPRoute app/web
FAIL  a  HTTPRoute app/api
      no X reaches it
      and more
FAIL  b  (no target)
      no target matches GRPCRoute
FAIL  c  Gateway infra/gw
      X infra/p is Conflicted: ^[[31mred^[[0m

3 expectations, 4 checks: 1 holds, 3 fail.
`
	if text.String() != wantText {
		t.Errorf("text:\n%s\nwant:\n%s", text.String(), wantText)
	}

	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back jsonReport
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Summary != (Summary{Expectations: 3, Checks: 4, Hold: 1, Fail: 3}) || len(back.Results) != 4 || back.Results[1].Failures[1] != "and more" {
		t.Errorf("JSON: %s", js.String())
	}

	var ju bytes.Buffer
	if err := rep.WriteJUnit(&ju); err != nil {
		t.Fatal(err)
	}
	var suites junitSuites
	if err := xml.Unmarshal(ju.Bytes(), &suites); err != nil {
		t.Fatalf("%v in %s", err, ju.String())
	}
	got := fmt.Sprintf("%d/%d", suites.Tests, suites.Failures)
	for _, s := range suites.Suites {
		got += fmt.Sprintf(" [%s %d/%d", s.Name, s.Tests, s.Failures)
		for _, c := range s.Cases {
			got += " " + c.Name
			if c.Failure != nil {
				got += "!" + c.Failure.Message
			}
		}
		got += "]"
	}
	if want := "4/3 [a 2/1 HTTPRoute app/web HTTPRoute app/api!no X reaches it] [b 1/1 (no target)!no target matches GRPCRoute] [c 1/1 Gateway infra/gw!X infra/p is Conflicted: \uFFFD[31mred\uFFFD[0m]"; got != want {
		t.Errorf("JUnit: %s\nwant %s\n%s", got, want, ju.String())
	}
}

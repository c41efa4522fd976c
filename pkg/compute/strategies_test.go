package compute

import (
	"fmt"
	"strings"
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/jsontest"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

type lvl int

const (
	lvNone lvl = iota
	lvNamespace
	lvGateway
	lvRoute
)

var lvlNames = map[lvl]string{lvNamespace: "Namespace", lvGateway: "Gateway", lvRoute: "HTTPRoute"}

func targetRefFor(l lvl) string {
	switch l {
	case lvNamespace:
		return `{group: "", kind: Namespace, name: appns}`
	case lvGateway:
		return `{group: gateway.networking.k8s.io, kind: Gateway, name: gw}`
	}
	return `{group: gateway.networking.k8s.io, kind: HTTPRoute, name: rt}`
}

type tablePolicy struct {
	name   string
	level  lvl
	stanza string // defaults | overrides
	value  string
}

func (p tablePolicy) yaml() string {
	return fmt.Sprintf(`apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: %s, namespace: appns}
spec:
  targetRefs: [%s]
  %s: {retryOn: [%q]}
`, p.name, targetRefFor(p.level), p.stanza, p.value)
}

// expectedWinner is docs/spec.md §5.4's rule: the least specific override wins (the
// older one at one level); without overrides the most specific default wins
// (the newer one at one level). ps are in creation order.
func expectedWinner(ps []tablePolicy) string {
	var best *tablePolicy
	for i := range ps {
		p := &ps[i]
		if p.stanza != "overrides" {
			continue
		}
		if best == nil || p.level < best.level {
			best = p
		}
	}
	if best != nil {
		return best.value
	}
	for i := range ps {
		p := &ps[i]
		if best == nil || p.level >= best.level {
			best = p
		}
	}
	if best == nil {
		return ""
	}
	return best.value
}

// TestRetryOnTables reproduces the GEP-2649 RetryOnPolicy tables ("empty
// list in HTTPRoute"), with the spec's rule that at one level the newer default
// beats the older one.
func TestRetryOnTables(t *testing.T) {
	levels := []lvl{lvNone, lvNamespace, lvGateway, lvRoute}
	tables := []struct{ row, col string }{
		{"defaults", "overrides"},
		{"overrides", "overrides"},
		{"defaults", "defaults"},
	}
	for _, tb := range tables {
		for _, rl := range levels {
			for _, cl := range levels {
				var ps []tablePolicy
				// Column policy A is created first, row policy B second.
				if cl != lvNone {
					ps = append(ps, tablePolicy{name: "a", level: cl, stanza: tb.col, value: "A-" + lvlNames[cl] + "-" + tb.col})
				}
				if rl != lvNone {
					ps = append(ps, tablePolicy{name: "b", level: rl, stanza: tb.row, value: "B-" + lvlNames[rl] + "-" + tb.row})
				}
				name := fmt.Sprintf("%s-%s/row=%s/col=%s", tb.row, tb.col, lvlNames[rl], lvlNames[cl])
				t.Run(name, func(t *testing.T) {
					var docs []string
					for _, p := range ps {
						docs = append(docs, p.yaml())
					}
					got := world(t, baseTopology, strings.Join(docs, "---\n"))
					want := expectedWinner(ps)
					obj, ok := got[Key{"appns", "rt"}]
					if want == "" {
						if ok {
							t.Fatalf("want no output, got\n%s", dump(obj))
						}
						return
					}
					tp := effAt(t, got, Key{"appns", "rt"}, "HTTPRoute", retryK)
					e := onlyEffective(t, tp, "")
					if g := string(e.Spec.Raw); g != fmt.Sprintf(`{"retryOn":[%q]}`, want) {
						t.Fatalf("spec %s, want %s\n%s", g, want, dump(obj))
					}
					winner := "appns/a"
					if strings.HasPrefix(want, "B") {
						winner = "appns/b"
					}
					if e.FieldSources["/retryOn"] != winner {
						t.Errorf("fieldSources %v, want %s", e.FieldSources, winner)
					}
					if o, _ := sourceOutcome(tp, winner, "*"); o != v1alpha1.OutcomeEnforced {
						t.Errorf("winner %s outcome %s", winner, o)
					}
					for _, p := range ps {
						if "appns/"+p.name != winner {
							if o, msg := sourceOutcome(tp, "appns/"+p.name, "*"); o != v1alpha1.OutcomeOverridden || !strings.Contains(msg, winner) {
								t.Errorf("loser %s outcome %s (%s)", p.name, o, msg)
							}
						}
					}
				})
			}
		}
	}
}

const patchPolicies = `
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: base, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  defaults:
    str: foo
    list: [a, b]
    obj: {foo: a, bar: b}
    listMaps: [{name: o1, foo: a, bar: b}, {name: o2, foo: c, bar: d}]
    keep: kept
    gone: soon
---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: ovr, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: rt}]
  overrides:
    strategy: patch
    str: bar
    list: [c, d]
    obj: {foo: c, bar: d}
    listMaps: [{name: o1, foo: e, bar: f, baz: g}]
    gone: null
`

// TestPatchListMapAndLists checks the GEP-2649 merge table: scalars and
// plain lists are replaced, objects merged by key, list-maps merged by their
// keys, null removes.
func TestPatchListMapAndLists(t *testing.T) {
	// base is AtomicDefaults; the route-level override is PatchOverrides, so
	// the fold is rfc7386(target base-defaults... ) — make base patch too.
	pol := strings.Replace(patchPolicies, "  defaults:\n    str: foo", "  defaults:\n    strategy: merge\n    str: foo", 1)
	got := world(t, baseTopology, pol)
	tp := effAt(t, got, Key{"appns", "rt"}, "HTTPRoute", retryK)
	e := onlyEffective(t, tp, "")
	want := `{"keep":"kept","list":["c","d"],"listMaps":[{"bar":"f","baz":"g","foo":"e","name":"o1"},{"bar":"d","foo":"c","name":"o2"}],"obj":{"bar":"d","foo":"c"},"str":"bar"}`
	if g := jsontest.Canonical(t, e.Spec.Raw); g != want {
		t.Fatalf("spec\n%s\nwant\n%s", g, want)
	}
	wantFS := map[string]string{
		"/keep": "appns/base", "/list": "appns/ovr", "/obj/bar": "appns/ovr", "/obj/foo": "appns/ovr", "/str": "appns/ovr",
		"/listMaps/0/name": "appns/ovr", "/listMaps/0/foo": "appns/ovr", "/listMaps/0/bar": "appns/ovr", "/listMaps/0/baz": "appns/ovr",
		"/listMaps/1/name": "appns/base", "/listMaps/1/foo": "appns/base", "/listMaps/1/bar": "appns/base",
	}
	if jsontest.Canonical(t, e.FieldSources) != jsontest.Canonical(t, wantFS) {
		t.Errorf("fieldSources %v\nwant %v", e.FieldSources, wantFS)
	}
	if o, _ := sourceOutcome(tp, "appns/base", v1alpha1.StanzaDefaults); o != v1alpha1.OutcomePartiallyEnforced {
		t.Errorf("base outcome %s", o)
	}
	if o, _ := sourceOutcome(tp, "appns/ovr", v1alpha1.StanzaOverrides); o != v1alpha1.OutcomeEnforced {
		t.Errorf("ovr outcome %s", o)
	}
	for _, s := range tp.Sources {
		if s.Name == "ovr" && s.MergeStrategy != v1alpha1.MergePatchOverrides || s.Name == "base" && s.MergeStrategy != v1alpha1.MergePatchDefaults {
			t.Errorf("source %s strategy %s", s.Name, s.MergeStrategy)
		}
	}
	// Atomic default at the gateway: the route-level patch override is
	// the start value; the established AtomicDefaults keeps it.
	got = world(t, baseTopology, patchPolicies)
	e = onlyEffective(t, effAt(t, got, Key{"appns", "rt"}, "HTTPRoute", retryK), "")
	want = `{"list":["c","d"],"listMaps":[{"bar":"f","baz":"g","foo":"e","name":"o1"}],"obj":{"bar":"d","foo":"c"},"str":"bar"}`
	if g := jsontest.Canonical(t, e.Spec.Raw); g != want {
		t.Fatalf("atomic: spec\n%s\nwant\n%s", g, want)
	}
}

// TestPatchOverridesOnTopOfDefaults: an established PatchOverrides entry
// patches what lies below, a list without list-map schema is replaced.
// mixedStrategiesPolicies attach along one path with different merge strategies: a patch override
// on the Namespace, patch defaults on the Gateway, atomic defaults on the route and an atomic
// override on its rule "main".
const mixedStrategiesPolicies = `
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: ns-ovr, namespace: appns}
spec:
  targetRefs: [{group: "", kind: Namespace, name: appns}]
  overrides: {strategy: patch, budget: {percent: 20}}
---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: gw-def, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  strategy: patch
  attempts: 3
  codes: [500, 502]
  budget: {percent: 50, interval: 10s}
---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: rt-def, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: rt}]
  codes: [503]
---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: rule-atomic-ovr, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: rt, sectionName: main}]
  overrides: {timeout: 1s}
`

func TestMixedStrategiesAlongPath(t *testing.T) {
	got := world(t, baseTopology, mixedStrategiesPolicies)
	tp := effAt(t, got, Key{"appns", "rt"}, "HTTPRoute", retryK)
	whole := onlyEffective(t, tp, "")
	// Fold: start rt-def {codes:[503]}; gw-def PatchDefaults: gw-def patched
	// by acc -> {attempts:3, codes:[503], budget:{50,10s}}; ns-ovr
	// PatchOverrides -> budget.percent 20.
	want := `{"attempts":3,"budget":{"interval":"10s","percent":20},"codes":[503]}`
	if g := jsontest.Canonical(t, whole.Spec.Raw); g != want {
		t.Fatalf("whole spec %s want %s", g, want)
	}
	if viaString(whole.Via) != "[Namespace/appns Gateway/gw HTTPRoute/rt]" {
		t.Errorf("via %s", viaString(whole.Via))
	}
	wantFS := map[string]string{"/attempts": "appns/gw-def", "/budget/interval": "appns/gw-def", "/budget/percent": "appns/ns-ovr", "/codes": "appns/rt-def"}
	if jsontest.Canonical(t, whole.FieldSources) != jsontest.Canonical(t, wantFS) {
		t.Errorf("fieldSources %v", whole.FieldSources)
	}
	// Section "main": the rule-level AtomicOverrides is the most specific,
	// so it is the start value; rt-def (AtomicDefaults) keeps it; gw-def
	// PatchDefaults fills in; ns-ovr patches budget.
	sec := onlyEffective(t, tp, "main")
	want = `{"attempts":3,"budget":{"interval":"10s","percent":20},"codes":[500,502],"timeout":"1s"}`
	if g := jsontest.Canonical(t, sec.Spec.Raw); g != want {
		t.Fatalf("section spec %s want %s", g, want)
	}
	if viaString(sec.Via) != "[Namespace/appns Gateway/gw HTTPRoute/rt HTTPRoute/rt#main]" {
		t.Errorf("section via %s", viaString(sec.Via))
	}
	if o, msg := sourceOutcome(tp, "appns/rt-def", "*"); o != v1alpha1.OutcomePartiallyEnforced {
		t.Errorf("rt-def outcome %s %s", o, msg)
	}
	if o, msg := sourceOutcome(tp, "appns/gw-def", "*"); o != v1alpha1.OutcomePartiallyEnforced || !strings.Contains(msg, "appns/ns-ovr") {
		t.Errorf("gw-def outcome %s %s", o, msg)
	}
	// svc hangs under rule "main": the section node is on its path.
	svcTP := effAt(t, got, Key{"appns", "svc"}, "Service", retryK)
	if e := onlyEffective(t, svcTP, ""); jsontest.Canonical(t, e.Spec.Raw) != want {
		t.Errorf("svc spec %s", e.Spec.Raw)
	}
	// svc2 hangs under the unnamed rule: no section on its path.
	svc2 := onlyEffective(t, effAt(t, got, Key{"appns", "svc2"}, "Service", retryK), "")
	if viaString(svc2.Via) != "[Namespace/appns Gateway/gw HTTPRoute/rt]" {
		t.Errorf("svc2 via %s", viaString(svc2.Via))
	}
	// The Namespace itself: only what is attached to it.
	nsTP := effAt(t, got, Key{"", "appns"}, "Namespace", retryK)
	if e := onlyEffective(t, nsTP, ""); jsontest.Canonical(t, e.Spec.Raw) != `{"budget":{"percent":20}}` {
		t.Errorf("namespace spec %s", e.Spec.Raw)
	}
}

// TestBothStanzasDefaultToPatch and the engine option.
func TestDefaultStrategies(t *testing.T) {
	both := `
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: both, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  defaults: {a: 1}
  overrides: {b: 2}
---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: one, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: rt}]
  default: {a: 5, c: 3}
`
	for _, tc := range []struct {
		opt          string
		want         string
		oneStrategy  v1alpha1.MergeStrategy
		bothStrategy v1alpha1.MergeStrategy
	}{
		{"", `{"a":5,"b":2,"c":3}`, v1alpha1.MergeAtomicDefaults, v1alpha1.MergePatchDefaults},
		{"Patch", `{"a":5,"b":2,"c":3}`, v1alpha1.MergePatchDefaults, v1alpha1.MergePatchDefaults},
	} {
		got := world(t, baseTopology, both, Options{DefaultInheritedStrategy: tc.opt})
		tp := effAt(t, got, Key{"appns", "rt"}, "HTTPRoute", retryK)
		e := onlyEffective(t, tp, "")
		if g := jsontest.Canonical(t, e.Spec.Raw); g != tc.want {
			t.Errorf("opt %q: spec %s want %s", tc.opt, g, tc.want)
		}
		for _, s := range tp.Sources {
			switch {
			case s.Name == "one" && s.MergeStrategy != tc.oneStrategy,
				s.Name == "both" && s.Stanza == v1alpha1.StanzaDefaults && s.MergeStrategy != tc.bothStrategy,
				s.Name == "both" && s.Stanza == v1alpha1.StanzaOverrides && s.MergeStrategy != v1alpha1.MergePatchOverrides:
				t.Errorf("opt %q: %s/%s strategy %s", tc.opt, s.Name, s.Stanza, s.MergeStrategy)
			}
		}
		// Within one policy the overrides entry comes before the defaults one.
		if len(tp.Sources) != 3 || tp.Sources[0].Stanza != v1alpha1.StanzaOverrides || tp.Sources[1].Stanza != v1alpha1.StanzaDefaults {
			t.Errorf("sources order: %+v", tp.Sources)
		}
	}
	if _, err := NewEngine(Options{DefaultInheritedStrategy: "Sometimes"}); err == nil {
		t.Error("bad default strategy accepted")
	}
}

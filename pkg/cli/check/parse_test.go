package check

import (
	"errors"
	"strings"
	"testing"
)

const header = "apiVersion: effectivepolicy.dev/v1alpha1\nkind: Expectations\n"

// TestParse: what a valid document becomes.
func TestParse(t *testing.T) {
	doc := header + `metadata: {name: platform}
expectations:
- name: public routes are authenticated
  targets:
    kind: HTTPRoute
    selector: {matchLabels: {tier: public}}
    attachedTo: {namespace: infra, name: public, sectionName: https}
  policy:
    group: gateway.envoyproxy.io
    kind: SecurityPolicy
    outcomes: [Enforced]
    fields:
    - path: /jwt/providers
      exists: true
    - path: timeout.request
      max: 30s
      min: "1s"
      optional: true
    - path: retries
      equals: null
- name: nothing conflicted
  targets: {group: "", kind: Service}
  forbiddenOutcomes: [Conflicted, Invalid]
  allowAssumedSemantics: false
---
apiVersion: v1
kind: ConfigMap
metadata: {name: not-ours}
`
	docs, err := Parse("e.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || len(docs[0].Expectations) != 2 {
		t.Fatalf("got %d documents, want 1 with 2 expectations: %+v", len(docs), docs)
	}
	e := docs[0].Expectations[0]
	f := e.Policy.Fields
	checks := []struct {
		what string
		ok   bool
	}{
		{"first expectation on line 5", e.Line == 5},
		{"second on line 23", docs[0].Expectations[1].Line == 23},
		{"the file", docs[0].File == "e.yaml"},
		{"a selector compiled", e.Targets.labels != nil && e.Targets.labels.String() == "tier=public"},
		{"attachedTo", e.Targets.AttachedTo.SectionName == "https"},
		{"a pointer's tokens", strings.Join(f[0].tokens, ",") == "jwt,providers"},
		{"a dotted path's tokens", strings.Join(f[1].tokens, ",") == "timeout,request"},
		{"a duration max", f[1].max.kind == durationBound && f[1].max.dur.Seconds() == 30},
		{"a duration min from a string", f[1].min.kind == durationBound && f[1].min.dur.Seconds() == 1},
		{"equals: null is an expectation", f[2].hasEquals && f[2].Equals == nil},
		{"no equals", !f[0].hasEquals},
		{"an explicit empty group", docs[0].Expectations[1].Targets.Group != nil && *docs[0].Expectations[1].Targets.Group == ""},
		{"allowAssumedSemantics false", !*docs[0].Expectations[1].AllowAssumedSemantics},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: not so in %+v", c.what, docs[0])
		}
	}
}

// TestParseErrors: each mistake is reported with its file, line and reason.
func TestParseErrors(t *testing.T) {
	exp := header + "expectations:\n- name: a\n"
	cases := []struct {
		name, doc, want string
	}{
		{"an unknown field", exp + "  targets: {kind: HTTPRoute, nmespace: x}\n  forbiddenOutcomes: [Conflicted]\n", `e.yaml:5: unknown field "nmespace"`},
		{"an unknown top-level field", header + "expectation: []\n", `e.yaml:3: unknown field "expectation"`},
		{"a string for an object", exp + "  targets: x\n  forbiddenOutcomes: [Conflicted]\n", "e.yaml:5: `x` is not an object"},
		{"a string for a bool", exp + "  targets: {}\n  allowAssumedSemantics: nope\n", "e.yaml:6: `nope` is not true or false"},
		{"a bad outcome", exp + "  targets: {}\n  forbiddenOutcomes: [Confliced]\n", `e.yaml:6: "Confliced" is not an outcome`},
		{"a bad policy outcome", exp + "  targets: {}\n  policy:\n    kind: X\n    outcomes: [Won]\n", `e.yaml:8: "Won" is not an outcome`},
		{"another apiVersion", "apiVersion: effectivepolicy.dev/v2\nkind: Expectations\n", `e.yaml:1: apiVersion of Expectations is effectivepolicy.dev/v1alpha1, not "effectivepolicy.dev/v2"`},
		{"no expectations", header + "metadata: {name: x}\n", "e.yaml:1: no expectations"},
		{"no name", header + "expectations:\n- targets: {}\n  forbiddenOutcomes: [Invalid]\n", "e.yaml:4: expectation 1 has no name"},
		{"a name twice", exp + "  forbiddenOutcomes: [Invalid]\n- name: a\n  forbiddenOutcomes: [Invalid]\n", `e.yaml:6: expectation "a" is named twice (first on line 4)`},
		{"nothing must hold", exp + "  targets: {kind: HTTPRoute}\n", `e.yaml:4: expectation "a" says nothing must hold`},
		{"a policy without a kind", exp + "  policy: {group: x}\n", "e.yaml:5: policy needs a kind"},
		{"a selector without a kind", exp + "  targets:\n    selector: {matchLabels: {a: b}}\n  forbiddenOutcomes: [Invalid]\n", "e.yaml:6: a label selector needs the kind"},
		{"a bad selector", exp + "  targets:\n    kind: Service\n    selector: {matchExpressions: [{key: a, operator: Near}]}\n  forbiddenOutcomes: [Invalid]\n", `e.yaml:7: selector: "Near" is not a valid label selector operator`},
		{"attachedTo without a namespace", exp + "  targets:\n    attachedTo: {name: gw}\n  forbiddenOutcomes: [Invalid]\n", "e.yaml:6: attachedTo needs the namespace and name of a Gateway"},
		{"attachedTo for a Service", exp + "  targets:\n    kind: Service\n    attachedTo: {namespace: a, name: gw}\n  forbiddenOutcomes: [Invalid]\n", "e.yaml:6: attachedTo picks routes, and Service is not a route kind"},
		{"a name without a kind", exp + "  targets: {name: x}\n  forbiddenOutcomes: [Invalid]\n", "e.yaml:5: a target name needs the kind"},
		{"a field without a path", exp + "  policy:\n    kind: K\n    fields:\n    - {exists: true}\n", "e.yaml:8: a field needs a path"},
		{"a bad pointer", exp + "  policy:\n    kind: K\n    fields:\n    - {path: /a~2, exists: true}\n", `e.yaml:8: path "/a~2": not a JSON pointer`},
		{"an empty dotted segment", exp + "  policy:\n    kind: K\n    fields:\n    - {path: a..b, exists: true}\n", `e.yaml:8: path "a..b": an empty segment`},
		{"a field that says nothing", exp + "  policy:\n    kind: K\n    fields:\n    - path: a\n", "e.yaml:8: field a says nothing must hold"},
		{"exists false with a bound", exp + "  policy:\n    kind: K\n    fields:\n    - path: a\n      exists: false\n      max: 3\n", "e.yaml:9: field a: exists: false contradicts"},
		{"a bound that is neither", exp + "  policy:\n    kind: K\n    fields:\n    - path: a\n      max: soon\n", "e.yaml:9: max of a: soon is not a number or a duration"},
		{"a bound that is a list", exp + "  policy:\n    kind: K\n    fields:\n    - path: a\n      min: [1]\n", "e.yaml:9: min of a: [1] is not a number or a duration"},
		{"bounds of two sorts", exp + "  policy:\n    kind: K\n    fields:\n    - path: a\n      max: 30s\n      min: 1\n", "e.yaml:10: min and max of a are not both"},
		{"bad YAML", "a: [b\n", "e.yaml:1: did not find expected ',' or ']'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("e.yaml", []byte(c.doc))
			var pe *Error
			if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("error %v, want one starting %q", err, c.want)
			}
		})
	}
}

// TestParseSkipsManifests: a stream of manifests alone has no expectations.
func TestParseSkipsManifests(t *testing.T) {
	docs, err := Parse("m.yaml", []byte("apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n"))
	if err != nil || len(docs) != 0 {
		t.Errorf("got %v, %v; want no documents", docs, err)
	}
}

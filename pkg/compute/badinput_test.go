package compute

import (
	"strings"
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/jsontest"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

func TestBadInput(t *testing.T) {
	good := `
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: good, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  attempts: 3
`
	gwRef := `[{group: gateway.networking.k8s.io, kind: HTTPRoute, name: rt}]`
	cases := []struct {
		name, spec string
		listedAt   Key    // where the Invalid source is listed
		kind       string // target kind there
		msg        string
	}{
		{"scalar defaults", "targetRefs: " + gwRef + "\n  defaults: 5", Key{"appns", "rt"}, "HTTPRoute", "spec.defaults must be an object"},
		{"list overrides", "targetRefs: " + gwRef + "\n  overrides: [1]", Key{"appns", "rt"}, "HTTPRoute", "spec.overrides must be an object"},
		{"unknown strategy", "targetRefs: " + gwRef + "\n  strategy: sometimes\n  a: 1", Key{"appns", "rt"}, "HTTPRoute", `unknown strategy "sometimes"`},
		{"unknown stanza strategy", "targetRefs: " + gwRef + "\n  defaults: {strategy: 7}", Key{"appns", "rt"}, "HTTPRoute", "must be a string"},
		{"no target", "a: 1", Key{"", "appns"}, "Namespace", "names no target"},
		{"empty targets", "targetRefs: []\n  a: 1", Key{"", "appns"}, "Namespace", "names no target"},
		{"too many targets", "targetRefs: [" + strings.Repeat("{group: gateway.networking.k8s.io, kind: HTTPRoute, name: rt},", 5) + "]\n  a: 1", Key{"appns", "rt"}, "HTTPRoute", "more than the 4"},
		{"targetRefs not a list", "targetRefs: {kind: HTTPRoute, name: rt}", Key{"", "appns"}, "Namespace", "must be a list"},
		{"kind not a string", "targetRefs: [{kind: 5, name: rt}]", Key{"", "appns"}, "Namespace", "kind and name"},
		{"target entry not an object", "targetRefs: [rt]", Key{"", "appns"}, "Namespace", "must be an object"},
		{"bad selector", "targetRefs: [{kind: HTTPRoute, selector: {matchExpressions: [{key: a, operator: Bogus}]}}]", Key{"", "appns"}, "Namespace", "selector"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := "apiVersion: example.com/v1\nkind: RetryPolicy\nmetadata: {name: bad, namespace: appns}\nspec:\n  " + tc.spec + "\n"
			got := world(t, baseTopology, good+"---\n"+bad)
			tp := effAt(t, got, tc.listedAt, tc.kind, retryK)
			o, msg := sourceOutcome(tp, "appns/bad", "*")
			if o != v1alpha1.OutcomeInvalid || !strings.Contains(msg, tc.msg) {
				t.Fatalf("bad policy: outcome %s message %q, want Invalid containing %q\n%s", o, msg, tc.msg, dump(got[tc.listedAt]))
			}
			for _, e := range tp.Effective {
				for _, src := range e.FieldSources {
					if src == "appns/bad" {
						t.Errorf("invalid source merged: %v", e.FieldSources)
					}
				}
			}
			// The good policy is unaffected.
			rt := onlyEffective(t, effAt(t, got, Key{"appns", "rt"}, "HTTPRoute", retryK), "")
			if string(rt.Spec.Raw) != `{"attempts":3}` {
				t.Errorf("good policy broken: %s", rt.Spec.Raw)
			}
		})
	}
	// Non-object spec and missing spec: listed at the policy's Namespace.
	for _, spec := range []string{"spec: 5", "spec: [a]", "spec: null", ""} {
		bad := "apiVersion: example.com/v1\nkind: RetryPolicy\nmetadata: {name: bad, namespace: appns}\n" + spec + "\n"
		got := world(t, baseTopology, good+"---\n"+bad)
		tp := effAt(t, got, Key{"", "appns"}, "Namespace", retryK)
		if o, msg := sourceOutcome(tp, "appns/bad", "*"); o != v1alpha1.OutcomeInvalid || msg == "" {
			t.Errorf("%q: %s %q", spec, o, msg)
		}
	}
}

func TestLabelConventions(t *testing.T) {
	crds := `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: a.x.io, labels: {gateway.networking.k8s.io/policy: "TRUE"}}
spec: {group: x.io, scope: Namespaced, names: {kind: A, plural: as}, versions: [{name: v1, served: true, storage: true}]}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: b.x.io, labels: {gateway.networking.k8s.io/policy: InHeRiTeD}}
spec: {group: x.io, scope: Namespaced, names: {kind: B, plural: bs}, versions: [{name: v1beta1, served: true, storage: false}, {name: v1, served: false, storage: true}]}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: c.x.io, labels: {gateway.networking.k8s.io/policy: maybe}}
spec: {group: x.io, scope: Namespaced, names: {kind: C, plural: cs}, versions: [{name: v1, served: true, storage: true}]}
`
	e, err := NewEngine(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range parseDocs(t, crds) {
		e.Upsert(o)
	}
	var res []string
	for _, r := range e.PolicyResources() {
		res = append(res, r.String())
	}
	if g := strings.Join(res, ";"); g != "x.io/v1, Resource=as;x.io/v1beta1, Resource=bs" {
		t.Errorf("policy resources %s", g)
	}
	pols := `
apiVersion: x.io/v1
kind: A
metadata: {name: a1, namespace: appns}
spec: {targetRef: {group: "", kind: Service, name: svc}, defaults: {kept: as-is}}
---
apiVersion: x.io/v1beta1
kind: B
metadata: {name: b1, namespace: appns}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}
  default: {strategy: MERGE, m: {a: 1, b: 2}}
---
apiVersion: x.io/v1beta1
kind: B
metadata: {name: b2, namespace: appns}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: rt}
  override: {m: {b: 3}}
`
	objs := append(parseDocs(t, crds), parseDocs(t, baseTopology)...)
	objs = append(objs, stamp(parseDocs(t, pols), 0)...)
	got, _ := ComputeAll(objs, Options{})
	svc := findTP(got[Key{"appns", "svc"}], "Service", "x.io", "A")
	if svc == nil || svc.Class != v1alpha1.ClassDirect || string(svc.Effective[0].Spec.Raw) != `{"kept":"as-is"}` {
		t.Errorf("direct by label TRUE: %+v", svc)
	}
	rt := findTP(got[Key{"appns", "rt"}], "HTTPRoute", "x.io", "B")
	if rt == nil {
		t.Fatalf("inherited by label: %s", dump(got[Key{"appns", "rt"}]))
	}
	// b1 PatchDefaults (merge), b2 AtomicOverrides at the route: start with
	// b2 {m:{b:3}}; b1 PatchDefaults -> {m:{a:1,b:3}}.
	if e := onlyEffective(t, rt, ""); jsontest.Canonical(t, e.Spec.Raw) != `{"m":{"a":1,"b":3}}` {
		t.Errorf("spec %s", e.Spec.Raw)
	}
	// C's label value is not recognized.
	e.Upsert(parseDocs(t, "apiVersion: x.io/v1\nkind: C\nmetadata: {name: c, namespace: appns}\nspec: {targetRef: {kind: Service, name: svc}}")[0])
	if len(e.Keys()) != 0 {
		t.Errorf("C treated as a policy: %v", e.Keys())
	}
}

// retryDescriptorFile describes RetryPolicy with fields of its own: targets, base (defaults),
// enforced (overrides), a strategy field and an ignored comment.
const retryDescriptorFile = `
apiVersion: effectivepolicy.dev/v1alpha1
kind: PolicyDescriptorList
descriptors:
- group: example.com
  kind: RetryPolicy
  class: Inherited
  targetRefs: [spec.targets]
  defaults: [spec.base]
  overrides: [spec.enforced]
  strategyField: mode
  strategyValues: {whole: Atomic, fields: Patch}
  defaultStrategy: Patch
  ignore: [spec.comment]
`

// invalidDescriptorFiles are descriptor files LoadDescriptors must reject, by what is wrong.
var invalidDescriptorFiles = map[string]string{
	"apiVersion":  "apiVersion: v9\nkind: PolicyDescriptorList\n",
	"kind":        "apiVersion: effectivepolicy.dev/v1alpha1\nkind: Other\n",
	"unknown key": "apiVersion: effectivepolicy.dev/v1alpha1\nkind: PolicyDescriptorList\ndescriptors: [{kind: A, class: Direct, targetRef: [spec.t], bogus: 1}]\n",
	"class":       "apiVersion: effectivepolicy.dev/v1alpha1\nkind: PolicyDescriptorList\ndescriptors: [{kind: A, class: Sideways, targetRef: [spec.t]}]\n",
	"no targets":  "apiVersion: effectivepolicy.dev/v1alpha1\nkind: PolicyDescriptorList\ndescriptors: [{kind: A, class: Direct}]\n",
	"bad path":    "apiVersion: effectivepolicy.dev/v1alpha1\nkind: PolicyDescriptorList\ndescriptors: [{kind: A, class: Direct, targetRef: [metadata.x]}]\n",
	"bad value":   "apiVersion: effectivepolicy.dev/v1alpha1\nkind: PolicyDescriptorList\ndescriptors: [{kind: A, class: Inherited, targetRef: [spec.t], strategyField: s, strategyValues: {x: Merge}}]\n",
	"duplicate":   "apiVersion: effectivepolicy.dev/v1alpha1\nkind: PolicyDescriptorList\ndescriptors: [{kind: A, class: Direct, targetRef: [spec.t]}, {kind: A, class: Direct, targetRef: [spec.t]}]\n",
	"not yaml":    "{{{",
}

// descriptorWinsCRD labels RetryPolicy Direct, which retryDescriptorFile contradicts.
const descriptorWinsCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: retrypolicies.example.com, labels: {gateway.networking.k8s.io/policy: Direct}}
spec: {group: example.com, scope: Namespaced, names: {kind: RetryPolicy, plural: retrypolicies}, versions: [{name: v1, served: true, storage: true}]}
`

// descriptorWinsPolicies are RetryPolicies in retryDescriptorFile's shape on the Gateway and the
// route.
const descriptorWinsPolicies = `
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: gwp, namespace: appns}
spec:
  targets: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  comment: not spec proper
  base: {a: 1, b: 1}
---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: rtp, namespace: appns}
spec:
  targets: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: rt}]
  base: {b: 2}
`

func TestLoadDescriptors(t *testing.T) {
	ds, err := LoadDescriptors([]byte(retryDescriptorFile))
	if err != nil || len(ds) != 1 || ds[0].StrategyValues["fields"] != StrategyPatch {
		t.Fatalf("load: %v %+v", err, ds)
	}
	for name, bad := range invalidDescriptorFiles {
		if _, err := LoadDescriptors([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// A file with nothing but comments (the shipped ConfigMap's default) adds
	// no descriptors and is no error; a document with fields must be complete.
	for name, empty := range map[string]string{"nothing": "", "comments": "# none yet\n#\n", "blank": "\n  \n"} {
		if ds, err := LoadDescriptors([]byte(empty)); err != nil || len(ds) != 0 {
			t.Errorf("%s: want no descriptors and no error, got %d, %v", name, len(ds), err)
		}
	}
	if _, err := LoadDescriptors([]byte("# a comment\ndescriptors: []\n")); err == nil {
		t.Error("a document without apiVersion and kind accepted")
	}
	single := "apiVersion: effectivepolicy.dev/v1alpha1\nkind: PolicyDescriptor\ngroup: g\nkind2: x\n"
	if _, err := LoadDescriptors([]byte(single)); err == nil {
		t.Error("single descriptor with unknown field accepted")
	}
	// A descriptor wins over the label and over a built-in.
	objs := append(parseDocs(t, descriptorWinsCRD), parseDocs(t, baseTopology)...)
	objs = append(objs, stamp(parseDocs(t, descriptorWinsPolicies), 0)...)
	got, err := ComputeAll(objs, Options{Descriptors: ds})
	if err != nil {
		t.Fatal(err)
	}
	tp := findTP(got[Key{"appns", "rt"}], "HTTPRoute", "example.com", "RetryPolicy")
	if tp == nil || tp.Class != v1alpha1.ClassInherited {
		t.Fatalf("descriptor did not win:\n%s", dump(got[Key{"appns", "rt"}]))
	}
	if e := onlyEffective(t, tp, ""); jsontest.Canonical(t, e.Spec.Raw) != `{"a":1,"b":2}` {
		t.Errorf("descriptor default Patch: %s", e.Spec.Raw)
	}
	if _, err := NewEngine(Options{Descriptors: []Descriptor{{Kind: "X"}}}); err == nil {
		t.Error("invalid descriptor accepted by NewEngine")
	}
	for _, d := range BuiltinDescriptors() {
		if err := ValidateDescriptor(&d); err != nil {
			t.Errorf("builtin %s: %v", d.Kind, err)
		}
	}
	if len(BuiltinDescriptors()) != 18 {
		t.Errorf("want 18 built-ins, got %d", len(BuiltinDescriptors()))
	}
}

func TestBadInputDirect(t *testing.T) {
	pols := `
apiVersion: example.com/v1
kind: TimeoutPolicy
metadata: {name: bad, namespace: appns}
spec:
  targetRefs: [{group: "", kind: Service, name: svc}]
  defaults: 5
---
apiVersion: example.com/v1
kind: TimeoutPolicy
metadata: {name: good, namespace: appns}
spec:
  targetRefs: [{group: "", kind: Service, name: svc}]
  overrides: {timeout: 2s}
  timeout: 1s
`
	got := world(t, baseTopology, pols)
	tp := findTP(got[Key{"appns", "svc"}], "Service", "example.com", "TimeoutPolicy")
	if tp == nil {
		t.Fatalf("no output:\n%s", dump(got[Key{"appns", "svc"}]))
	}
	if o, msg := sourceOutcome(tp, "appns/bad", "*"); o != v1alpha1.OutcomeInvalid || !strings.Contains(msg, "spec.defaults must be an object") {
		t.Errorf("bad: %s %q", o, msg)
	}
	// The invalid (older) policy does not win: the valid one is in effect.
	if e := onlyEffective(t, tp, ""); string(e.Spec.Raw) != `{"timeout":"2s"}` {
		t.Errorf("spec %s", e.Spec.Raw)
	}
	if o, _ := sourceOutcome(tp, "appns/good", "*"); o != v1alpha1.OutcomeEnforced {
		t.Errorf("good: %s", o)
	}
}

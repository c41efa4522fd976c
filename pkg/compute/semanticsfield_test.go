package compute

import (
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// semanticsCRD is a CRD of kind in group: labels as given, a GEP-713
// targetRefs schema when refs is set.
func semanticsCRD(group, kind, labels string, refs bool) string {
	props := ""
	if refs {
		props = `
            properties:
              targetRefs: {type: array, items: {type: object, properties: {group: {type: string}, kind: {type: string}, name: {type: string}}}}`
	}
	return `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ` + kind + `s.` + group + `, labels: {` + labels + `}}
spec:
  group: ` + group + `
  scope: Namespaced
  names: {kind: ` + kind + `, plural: ` + kind + `s}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true` + props + `
`
}

func semanticsPolicy(apiVersion, kind string) string {
	return `---
apiVersion: ` + apiVersion + `
kind: ` + kind + `
metadata: {name: p, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: rt}]
  defaults: {a: 1}
`
}

const semanticsDescriptors = `
apiVersion: effectivepolicy.dev/v1alpha1
kind: PolicyDescriptorList
descriptors:
- {group: file.example, kind: Generic, class: Inherited, targetRefs: [spec.targetRefs], defaults: [spec.defaults]}
- {group: file.example, kind: Named, class: Inherited, targetRefs: [spec.targetRefs], defaults: [spec.defaults], semantics: Kuadrant}
`

// TestSemanticsField: every entry says which rules computed it (docs/spec.md §4.1,
// "Saying when we guess"): a kind found by label or by schema alone is Assumed, a kind a
// descriptor describes (built in, or from a file, its label notwithstanding) is its profile's
// name, GEP when the descriptor names none; a PolicyReach says the same.
func TestSemanticsField(t *testing.T) {
	ds, err := LoadDescriptors([]byte(semanticsDescriptors))
	if err != nil {
		t.Fatal(err)
	}
	topo := baseTopology +
		semanticsCRD("found.example", "Labeled", "gateway.networking.k8s.io/policy: inherited", false) +
		semanticsCRD("found.example", "Schemed", "", true) +
		semanticsCRD("file.example", "Generic", "gateway.networking.k8s.io/policy: inherited", false) +
		semanticsCRD("file.example", "Named", "", false) +
		semanticsCRD("gateway.envoyproxy.io", "BackendTrafficPolicy", "", false)
	pols := semanticsPolicy("found.example/v1", "Labeled") + semanticsPolicy("found.example/v1", "Schemed") +
		semanticsPolicy("file.example/v1", "Generic") + semanticsPolicy("file.example/v1", "Named") +
		semanticsPolicy("gateway.envoyproxy.io/v1alpha1", "BackendTrafficPolicy") + semanticsPolicy("example.com/v1", "RetryPolicy")
	e := semanticsEngine(t, ds, topo, pols)
	obj, ok := e.Compute(Key{"appns", "rt"})
	if !ok {
		t.Fatal("no output for rt")
	}
	infos := e.Policies(Key{"appns", "p"})
	for _, tc := range []struct{ group, kind, want string }{
		{"found.example", "Labeled", v1alpha1.SemanticsAssumed},
		{"found.example", "Schemed", v1alpha1.SemanticsAssumed},
		{"file.example", "Generic", "GEP"},
		{"file.example", "Named", "Kuadrant"},
		{"gateway.envoyproxy.io", "BackendTrafficPolicy", "EnvoyGateway"},
		{"example.com", "RetryPolicy", v1alpha1.SemanticsAssumed}, // testCRDs: by label
	} {
		t.Run(tc.kind, func(t *testing.T) {
			tp := findTP(obj, "HTTPRoute", tc.group, tc.kind)
			if tp == nil {
				t.Fatalf("no %s on rt:\n%s", tc.kind, dump(obj))
			}
			if tp.Semantics != tc.want {
				t.Errorf("semantics %q, want %q", tp.Semantics, tc.want)
			}
			var got []string
			for _, p := range infos {
				if p.Group == tc.group && p.Kind == tc.kind {
					got = append(got, p.Semantics)
				}
			}
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("PolicyInfo semantics %q, want [%s]", got, tc.want)
			}
		})
	}
}

// TestSemanticsFollowsTheCRD: a kind found by label that its CRD no longer labels but whose
// schema still says it is a policy stays Assumed, and so when labeled again; labeled not a
// policy, it is gone.
func TestSemanticsFollowsTheCRD(t *testing.T) {
	e := semanticsEngine(t, nil, baseTopology+semanticsCRD("found.example", "Moving", "gateway.networking.k8s.io/policy: direct", true),
		semanticsPolicy("found.example/v1", "Moving"))
	key := Key{"appns", "rt"}
	for _, step := range []struct {
		labels string
		want   string // "" for no entry
	}{
		{"", v1alpha1.SemanticsAssumed},
		{"gateway.networking.k8s.io/policy: Inherited", v1alpha1.SemanticsAssumed},
		{"gateway.networking.k8s.io/policy: none", ""},
	} {
		for _, o := range parseDocs(t, semanticsCRD("found.example", "Moving", step.labels, true)) {
			e.Upsert(o)
		}
		got := ""
		if obj, ok := e.Compute(key); ok {
			if tp := findTP(obj, "HTTPRoute", "found.example", "Moving"); tp != nil {
				got = tp.Semantics
			}
		}
		if got != step.want {
			t.Errorf("labels {%s}: semantics %q, want %q", step.labels, got, step.want)
		}
	}
}

func semanticsEngine(t *testing.T, ds []Descriptor, topo, pols string) *Engine {
	t.Helper()
	e, err := NewEngine(Options{Descriptors: ds})
	if err != nil {
		t.Fatal(err)
	}
	objs := worldObjs(t, topo, pols)
	for _, crds := range []bool{true, false} {
		for _, o := range objs {
			if isCRD(o) == crds {
				e.Upsert(o)
			}
		}
	}
	return e
}

package compute

import (
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

func TestSchemaClass(t *testing.T) {
	const ref = `{type: object, properties: {group: {type: string}, kind: {type: string}, name: {type: string}, sectionName: {type: string}}}`
	for _, tc := range []struct {
		name   string
		schema string
		class  v1alpha1.PolicyClass // "" = not a policy
	}{
		{"targetRef", `{type: object, properties: {spec: {type: object, properties: {targetRef: ` + ref + `, retries: {type: integer}}}}}`, v1alpha1.ClassDirect},
		{"targetRefs", `{type: object, properties: {spec: {type: object, properties: {targetRefs: {type: array, items: ` + ref + `}}}}}`, v1alpha1.ClassDirect},
		{"targetRefs with defaults", `{type: object, properties: {spec: {type: object, properties: {targetRefs: {type: array, items: ` + ref + `}, defaults: {type: object}}}}}`, v1alpha1.ClassInherited},
		{"targetRef with overrides only", `{type: object, properties: {spec: {type: object, properties: {targetRef: ` + ref + `, overrides: {type: object}}}}}`, v1alpha1.ClassInherited},
		{"targetRef with default (singular)", `{type: object, properties: {spec: {type: object, properties: {targetRef: ` + ref + `, default: {type: object}}}}}`, v1alpha1.ClassInherited},
		// Near misses.
		{"neither", `{type: object, properties: {spec: {type: object, properties: {retries: {type: integer}}}}}`, ""},
		{"no spec", `{type: object, properties: {targetRef: ` + ref + `}}`, ""},
		{"a route: parentRefs", `{type: object, properties: {spec: {type: object, properties: {parentRefs: {type: array, items: ` + ref + `}}}}}`, ""},
		{"apiVersion instead of group (autoscaler style)", `{type: object, properties: {spec: {type: object, properties: {targetRef: {type: object, properties: {apiVersion: {type: string}, kind: {type: string}, name: {type: string}}}}}}}`, ""},
		{"targetRef without name", `{type: object, properties: {spec: {type: object, properties: {targetRef: {type: object, properties: {group: {type: string}, kind: {type: string}}}}}}}`, ""},
		{"targetRef a string", `{type: object, properties: {spec: {type: object, properties: {targetRef: {type: string}}}}}`, ""},
		{"targetRefs of strings", `{type: object, properties: {spec: {type: object, properties: {targetRefs: {type: array, items: {type: string}}}}}}`, ""},
		{"targetRefs an object", `{type: object, properties: {spec: {type: object, properties: {targetRefs: ` + ref + `}}}}`, ""},
		{"name an integer", `{type: object, properties: {spec: {type: object, properties: {targetRef: {type: object, properties: {group: {type: string}, kind: {type: string}, name: {type: integer}}}}}}}`, ""},
		{"schemaless targetRef", `{type: object, properties: {spec: {type: object, properties: {targetRef: {type: object, x-kubernetes-preserve-unknown-fields: true}}}}}`, ""},
		{"nested deeper", `{type: object, properties: {spec: {type: object, properties: {config: {type: object, properties: {targetRef: ` + ref + `}}}}}}`, ""},
		{"in status", `{type: object, properties: {status: {type: object, properties: {targetRef: ` + ref + `}}}}`, ""},
		{"open schema", `{type: object, x-kubernetes-preserve-unknown-fields: true}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s apiextv1.JSONSchemaProps
			if err := yaml.Unmarshal([]byte(tc.schema), &s); err != nil {
				t.Fatal(err)
			}
			class, ok := schemaClass(&s)
			if ok != (tc.class != "") || class != tc.class {
				t.Errorf("schemaClass = %q, %v; want %q", class, ok, tc.class)
			}
		})
	}
}

// TestPolicyKindBySchema: an unlabeled CRD with a GEP-713 targetRefs schema is a policy kind;
// the label still wins (a value other than direct, true or inherited says it is not one).
func TestPolicyKindBySchema(t *testing.T) {
	crd := func(kind, labels, specProps string) string {
		return `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ` + kind + `s.found.example, labels: {` + labels + `}}
spec:
  group: found.example
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
            x-kubernetes-preserve-unknown-fields: true
            properties: {` + specProps + `}
`
	}
	const refs = `targetRefs: {type: array, items: {type: object, properties: {group: {type: string}, kind: {type: string}, name: {type: string}}}}`
	topo := baseTopology +
		crd("Plain", "", refs) +
		crd("Stanzas", "", refs+`, defaults: {type: object, x-kubernetes-preserve-unknown-fields: true}`) +
		crd("Refused", "gateway.networking.k8s.io/policy: none", refs) +
		crd("Scaler", "", `targetRef: {type: object, properties: {apiVersion: {type: string}, kind: {type: string}, name: {type: string}}}`)
	pols := ""
	for _, k := range []string{"Plain", "Stanzas", "Refused"} {
		pols += `---
apiVersion: found.example/v1
kind: ` + k + `
metadata: {name: p, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: rt}]
  defaults: {a: 1}
`
	}
	pols += `---
apiVersion: found.example/v1
kind: Scaler
metadata: {name: p, namespace: appns}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
`
	got := world(t, topo, pols)
	classes := map[string]v1alpha1.PolicyClass{}
	for _, tg := range got[Key{"appns", "rt"}].(*v1alpha1.EffectivePolicy).Targets {
		for _, tp := range tg.Policies {
			if tp.Group == "found.example" {
				classes[tp.Kind] = tp.Class
			}
		}
	}
	want := map[string]v1alpha1.PolicyClass{"Plain": v1alpha1.ClassDirect, "Stanzas": v1alpha1.ClassInherited}
	if len(classes) != len(want) || classes["Plain"] != want["Plain"] || classes["Stanzas"] != want["Stanzas"] {
		t.Errorf("policy kinds reaching rt: %v, want %v", classes, want)
	}
}

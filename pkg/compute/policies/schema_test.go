package policies

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
			class, ok := SchemaClass(&s)
			if ok != (tc.class != "") || class != tc.class {
				t.Errorf("SchemaClass = %q, %v; want %q", class, ok, tc.class)
			}
		})
	}
}

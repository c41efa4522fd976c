package compute

import (
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

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

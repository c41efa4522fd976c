package scale

import (
	"context"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestCRDsAreValid runs the generated CRDs through the validation
// kube-apiserver applies on create (structural schema, list-map rules), so
// that the YAML of test/scale/gen loads into a real cluster.
func TestCRDsAreValid(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := apiextv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := apiextensions.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, u := range Generate(Options{Scale: 0.001, GatewayAPICRDs: true}) {
		if u.GetKind() != "CustomResourceDefinition" {
			continue
		}
		n++
		var v1 apiextv1.CustomResourceDefinition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &v1); err != nil {
			t.Fatalf("%s: %v", u.GetName(), err)
		}
		apiextv1.SetObjectDefaults_CustomResourceDefinition(&v1)
		var internal apiextensions.CustomResourceDefinition
		if err := scheme.Convert(&v1, &internal, nil); err != nil {
			t.Fatalf("%s: %v", u.GetName(), err)
		}
		if errs := validation.ValidateCustomResourceDefinition(context.Background(), &internal); len(errs) > 0 {
			t.Errorf("%s: %v", u.GetName(), errs.ToAggregate())
		}
	}
	if n != len(PolicyKinds)+4 { // GatewayClass, Gateway, HTTPRoute, ReferenceGrant
		t.Errorf("%d CRDs", n)
	}
}

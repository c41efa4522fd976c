package live

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// The live layer exposes the engine's sensitive-field index to the REST
// layer (issue #8).
func TestSensitiveFieldsIndex(t *testing.T) {
	gk := schema.GroupKind{Group: "example.com", Kind: "RetryPolicy"}
	e, err := compute.NewEngine(compute.Options{Descriptors: []compute.Descriptor{{
		Group: gk.Group, Kind: gk.Kind, Class: "Inherited",
		TargetRef: []string{"spec.targetRef"}, SensitiveFields: []string{"/token"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	e.Upsert(crd("example.com", "RetryPolicy", "retrypolicies", false))
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds())
	o := NewOptions()
	o.CacheDir = ""
	l, err := NewWithEngine(o, e, client)
	if err != nil {
		t.Fatal(err)
	}
	sk, ok := l.SensitiveFields().SensitiveKind(gk)
	if !ok || sk.Resource != (schema.GroupResource{Group: "example.com", Resource: "retrypolicies"}) || len(sk.Paths) != 1 || sk.Paths[0] != "/token" {
		t.Fatalf("SensitiveKind = %+v, %v", sk, ok)
	}
	if _, ok := l.SensitiveFields().SensitiveKind(schema.GroupKind{Group: "x", Kind: "Y"}); ok {
		t.Fatal("unknown kind is sensitive")
	}
	// An engine without the index: nothing is sensitive.
	l2, err := NewWithEngine(o, newFakeEngine(), client)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := l2.SensitiveFields().SensitiveKind(gk); ok {
		t.Fatal("fake engine has sensitive kinds")
	}
}

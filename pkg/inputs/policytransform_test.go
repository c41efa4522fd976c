package inputs

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A policy keeps its annotations through the informer's transform (a profile may read one,
// such as kgateway's policy weight), except kubectl's copy of the whole object; the rest is
// trimmed as for any object.
func TestPolicyTransformKeepsAnnotations(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "gateway.kgateway.dev", Version: "v1alpha1", Kind: "TrafficPolicy"}
	cases := []struct {
		name string
		ann  map[string]string
		want map[string]string
	}{
		{"weight kept, last-applied dropped",
			map[string]string{"kgateway.dev/policy-weight": "2", lastApplied: `{"big":"copy"}`},
			map[string]string{"kgateway.dev/policy-weight": "2"}},
		{"only last-applied", map[string]string{lastApplied: "{}"}, nil},
		{"none", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := &unstructured.Unstructured{Object: map[string]interface{}{
				"apiVersion": gvk.GroupVersion().String(), "kind": gvk.Kind,
				"metadata": map[string]interface{}{"name": "p", "namespace": "ns", "generation": int64(3)},
				"spec":     map[string]interface{}{"timeouts": map[string]interface{}{"request": "5s"}},
				"status":   map[string]interface{}{"ancestors": []interface{}{}},
			}}
			in.SetAnnotations(c.ann)
			orig := in.DeepCopy()
			outI, err := PolicyTransformFor(gvk)(in)
			if err != nil {
				t.Fatal(err)
			}
			out := outI.(*unstructured.Unstructured)
			if !reflect.DeepEqual(in, orig) {
				t.Error("transform mutated its input")
			}
			if got := out.GetAnnotations(); !reflect.DeepEqual(got, c.want) {
				t.Errorf("annotations %v, want %v", got, c.want)
			}
			if _, ok := out.Object["status"]; ok || out.GetGeneration() != 0 {
				t.Errorf("not trimmed: %v", out.Object)
			}
			if again, _ := PolicyTransformFor(gvk)(out); !reflect.DeepEqual(again, out) {
				t.Error("transform is not idempotent")
			}
		})
	}
}

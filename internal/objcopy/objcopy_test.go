package objcopy

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

func TestShallow(t *testing.T) {
	typed := &v1alpha1.EffectivePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: "1"},
		Targets:    []v1alpha1.Target{{Kind: "HTTPRoute", Name: "a"}},
	}
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "a", "resourceVersion": "1"}}}
	for _, tc := range []struct {
		name string
		obj  runtime.Object
		// shared reports whether the copy shares obj's content.
		shared     func(orig, c runtime.Object) bool
		wantShared bool
	}{
		{"typed: own metadata, shared content", typed, func(orig, c runtime.Object) bool {
			return &orig.(*v1alpha1.EffectivePolicy).Targets[0] == &c.(*v1alpha1.EffectivePolicy).Targets[0]
		}, true},
		{"unstructured: deep copy", u, func(orig, c runtime.Object) bool {
			om := orig.(*unstructured.Unstructured).Object["metadata"].(map[string]any)
			cm := c.(*unstructured.Unstructured).Object["metadata"].(map[string]any)
			om["probe"] = true
			defer delete(om, "probe")
			_, seen := cm["probe"]
			return seen
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Shallow(tc.obj)
			if c == tc.obj {
				t.Fatal("Shallow returned its argument")
			}
			if got := tc.shared(tc.obj, c); got != tc.wantShared {
				t.Errorf("content shared = %v, want %v", got, tc.wantShared)
			}
			c.(metav1.Object).SetResourceVersion("2")
			if rv := tc.obj.(metav1.Object).GetResourceVersion(); rv != "1" {
				t.Errorf("setting the copy's resourceVersion changed the original's to %q", rv)
			}
		})
	}
}

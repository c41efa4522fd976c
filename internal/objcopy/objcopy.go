// Package objcopy copies API objects cheaply.
package objcopy

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Shallow returns a copy of obj that shares everything but its top-level
// struct. For a typed object (a pointer to a struct embedding TypeMeta and
// ObjectMeta by value) the copy has its own type and object metadata, so
// setting a kind, a resourceVersion or a uid on it leaves obj untouched,
// while the content below (large and read-only for the callers: outputs of
// the engine) is not copied. Objects of another shape, e.g. unstructured ones
// whose metadata lives in a shared map, are deep-copied.
func Shallow(obj runtime.Object) runtime.Object {
	if _, ok := obj.(metav1.ObjectMetaAccessor); ok {
		if v := reflect.ValueOf(obj); v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Kind() == reflect.Struct {
			c := reflect.New(v.Elem().Type())
			c.Elem().Set(v.Elem())
			if o, ok := c.Interface().(runtime.Object); ok {
				return o
			}
		}
	}
	return obj.DeepCopyObject()
}

package versioned

// Content equality: Apply emits no event and keeps the resourceVersion of an
// object whose new content equals the stored one.

import (
	"bytes"
	"encoding/json"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/objcopy"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
)

// contentEquality is apiequality.Semantic plus a rule for RawExtension: two
// raw documents are equal when their bytes are, or when they are the same
// JSON up to insignificant white space. So an object restored from its JSON
// encoding (compact) equals the same object computed afresh, without
// round-tripping every computed object through JSON.
var contentEquality = func() conversion.Equalities {
	e := conversion.EqualitiesOrDie(func(a, b runtime.RawExtension) bool {
		if a.Object != nil || b.Object != nil {
			return apiequality.Semantic.DeepEqual(a.Object, b.Object) && rawEqual(a.Raw, b.Raw)
		}
		return rawEqual(a.Raw, b.Raw)
	})
	for t, f := range apiequality.Semantic.Equalities {
		e.Equalities[t] = f
	}
	// Encoded outputs (what the live layer stores) compare by their fields,
	// the compressed targets as bytes (encoded.Equal).
	if err := e.AddFunc(func(a, b encoded.Object) bool { return encoded.Equal(&a, &b) }); err != nil {
		panic(err)
	}
	return e
}()

func rawEqual(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return false
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// shallow returns a copy of o with its own top-level struct
// (objcopy.Shallow), so that the store sets metadata on its own copy.
func shallow[T Object](o T) T { return objcopy.Shallow(o).(T) }

// sameContent compares two objects ignoring resourceVersion,
// creationTimestamp, uid and TypeMeta. It works on shallow copies: nothing
// big is copied.
func sameContent(a, b runtime.Object) bool {
	a, b = objcopy.Shallow(a), objcopy.Shallow(b)
	for _, o := range []runtime.Object{a, b} {
		o.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
		if m, err := meta.Accessor(o); err == nil {
			m.SetResourceVersion("")
			m.SetCreationTimestamp(metav1.Time{})
			m.SetUID("")
		}
	}
	return contentEquality.DeepEqual(a, b)
}

package registry_test

import (
	"context"
	"strconv"
	"testing"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/registry"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/versioned"
)

// TestServedObjectsAreCopies: what Get, List and Watch hand to the API
// machinery has its own TypeMeta and ObjectMeta (which the machinery sets
// while encoding), so that writing them leaves the stored object alone, for
// every way an object is served. (An encoded.Object has no TypeMeta of its
// own: GetObjectKind returns a fresh one.)
func TestServedObjectsAreCopies(t *testing.T) {
	s := newStore(versioned.Options{Namespaced: true, BookmarkInterval: -1})
	r := registry.NewEffectivePolicyREST(s)
	ctx := genericapirequest.WithNamespace(context.Background(), "ns")
	obj := &v1alpha1.EffectivePolicy{Targets: []v1alpha1.Target{{Kind: "HTTPRoute", Name: "a"}}}
	s.Apply([]change{{Namespace: "ns", Name: "a", Object: encoded.MustNew(obj)}})

	watchFrom := func(rv string) runtime.Object {
		w, err := r.Watch(ctx, &metainternalversion.ListOptions{ResourceVersion: rv})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		if rv != "" {
			s.Apply([]change{{Namespace: "ns", Name: "b", Object: encoded.MustNew(&v1alpha1.EffectivePolicy{})}})
		}
		return recv(t, w).Object
	}
	for _, tc := range []struct {
		name  string
		serve func() runtime.Object
	}{
		{"get", func() runtime.Object {
			o, err := r.Get(ctx, "a", &metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return o
		}},
		{"list item", func() runtime.Object {
			l, err := r.List(ctx, &metainternalversion.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return l.(*encoded.List).Items[0]
		}},
		{"initial watch event", func() runtime.Object { return watchFrom("") }},
		{"watch event", func() runtime.Object { return watchFrom(strconv.FormatUint(s.ResourceVersion(), 10)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.serve().(*encoded.Object)
			o.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{Group: "x", Version: "v9", Kind: "Other"})
			o.ResourceVersion = "12345"
			o.Labels = map[string]string{"x": "y"}
			sm, _ := s.Get(ctx, o.Namespace, o.Name)
			if sm.GetObjectKind().GroupVersionKind() != v1alpha1.SchemeGroupVersion.WithKind("EffectivePolicy") || sm.Labels != nil || sm.ResourceVersion == "12345" {
				t.Errorf("writing the served object's metadata changed the stored one: %+v %+v", sm.GetObjectKind(), sm.ObjectMeta)
			}
		})
	}
}

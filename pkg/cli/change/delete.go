package change

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/kinds"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/manifests"
)

// Ref resolves one object to delete given as KIND/NAME (kubectl's form:
// the kind as the user types it, with its group when two groups share it),
// a namespaced kind in ns. Errors start with what, naming arg ("--delete
// x/y: ...").
func Ref(r kinds.Resolver, ns, what, arg string) (v1alpha1.ReviewObjectReference, error) {
	typ, name, ok := strings.Cut(arg, "/")
	if !ok || typ == "" || name == "" || strings.Contains(name, "/") {
		return v1alpha1.ReviewObjectReference{}, fmt.Errorf("%s %q: want KIND/NAME", what, arg)
	}
	ks, err := r.Resolve(typ)
	if err != nil {
		return v1alpha1.ReviewObjectReference{}, fmt.Errorf("%s %s: %w", what, arg, err)
	}
	if len(ks) > 1 {
		var all []string
		for _, k := range ks {
			all = append(all, k.String())
		}
		return v1alpha1.ReviewObjectReference{}, fmt.Errorf("%s %s: %q is the kind of %s: give it with its group (%s/%s)", what, arg, typ, strings.Join(all, " and "), strings.ToLower(ks[0].Plural+"."+ks[0].Group), name)
	}
	ref := v1alpha1.ReviewObjectReference{Group: ks[0].Group, Kind: ks[0].Kind, Name: name}
	if ks[0].Namespaced {
		ref.Namespace = ns
	}
	return ref, nil
}

// Refs resolves the objects to delete given as KIND/NAME, as Ref does.
func Refs(r kinds.Resolver, ns, what string, args []string) ([]v1alpha1.ReviewObjectReference, error) {
	var out []v1alpha1.ReviewObjectReference
	for _, arg := range args {
		ref, err := Ref(r, ns, what, arg)
		if err != nil {
			return nil, err
		}
		out = append(out, ref)
	}
	return out, nil
}

// RefsOf names the objects of manifests to delete (kubectl delete -f):
// namespaced objects without a namespace in ns, by the kinds cluster
// knows (then the manifests' CRDs', then the well-known ones). Only the
// kind and the name of each matter, as for kubectl delete.
func RefsOf(objs []*unstructured.Unstructured, cluster kinds.Resolver, ns string) ([]v1alpha1.ReviewObjectReference, error) {
	scope, err := scopeOf(objs, cluster, ns)
	if err != nil {
		return nil, err
	}
	manifests.SetNamespaces(objs, scope)
	out := make([]v1alpha1.ReviewObjectReference, 0, len(objs))
	for i, u := range objs {
		if u.GetName() == "" {
			return nil, fmt.Errorf("object %d to delete (%s) has no name", i+1, u.GetKind())
		}
		gk := u.GroupVersionKind().GroupKind()
		out = append(out, v1alpha1.ReviewObjectReference{Group: gk.Group, Kind: gk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()})
	}
	return out, nil
}

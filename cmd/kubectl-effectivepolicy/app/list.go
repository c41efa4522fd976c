package app

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned/scheme"
)

// listItems returns the items of a list object (nil for anything else).
func listItems(list runtime.Object) []runtime.Object {
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil
	}
	return items
}

// asList returns what -o prints for objs: the object itself when one was
// asked for by name, else a list of them (as kubectl get prints several),
// each item with its apiVersion and kind.
func asList(objs []runtime.Object, single bool) runtime.Object {
	if single && len(objs) == 1 {
		return objs[0]
	}
	var list runtime.Object = &v1alpha1.EffectivePolicyList{}
	if len(objs) > 0 {
		switch objs[0].(type) {
		case *v1alpha1.ClusterEffectivePolicy:
			list = &v1alpha1.ClusterEffectivePolicyList{}
		case *v1alpha1.PolicyReach:
			list = &v1alpha1.PolicyReachList{}
		case *v1alpha1.ClusterPolicyReach:
			list = &v1alpha1.ClusterPolicyReachList{}
		}
	}
	typed := make([]runtime.Object, len(objs))
	for i, obj := range objs {
		typed[i] = obj
		if gvks, _, err := scheme.Scheme.ObjectKinds(obj); err == nil && len(gvks) > 0 {
			typed[i] = obj.DeepCopyObject()
			typed[i].GetObjectKind().SetGroupVersionKind(gvks[0])
		}
	}
	_ = meta.SetList(list, typed) // the items are of the list's type
	return list
}

package render

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// TargetsOf returns the namespace ("" when cluster-scoped) and the targets of an
// EffectivePolicy or ClusterEffectivePolicy; nothing for any other object.
func TargetsOf(obj runtime.Object) (string, []v1alpha1.Target) {
	switch o := obj.(type) {
	case *v1alpha1.EffectivePolicy:
		return o.Namespace, o.Targets
	case *v1alpha1.ClusterEffectivePolicy:
		return "", o.Targets
	}
	return "", nil
}

// PoliciesOf returns the namespace ("" when cluster-scoped), name and policies of a
// PolicyReach or ClusterPolicyReach; nothing for any other object.
func PoliciesOf(obj runtime.Object) (namespace, name string, policies []v1alpha1.ReachPolicy) {
	switch o := obj.(type) {
	case *v1alpha1.PolicyReach:
		return o.Namespace, o.Name, o.Policies
	case *v1alpha1.ClusterPolicyReach:
		return "", o.Name, o.Policies
	}
	return "", "", nil
}

// Items returns the items of the list objects, in order, each a pointer into its list (a
// non-list contributes nothing).
func Items(lists ...runtime.Object) []runtime.Object {
	var out []runtime.Object
	for _, l := range lists {
		items, err := meta.ExtractList(l)
		if err != nil {
			continue
		}
		out = append(out, items...)
	}
	return out
}

package compute

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// TestIncrementalDelegation is TestIncremental for kgateway's route delegation on the case
// tp-delegation-multi-level-priority (kg13): a delegating route's annotation, its Gateway's
// class, and a child's acceptance change what reaches routes other than the one mutated.
func TestIncrementalDelegation(t *testing.T) {
	objs := loadImplCase(t, "../../test/upstream/kgateway/tp-delegation-multi-level-priority")
	e, cur := feedIncremental(t, objs, nil)
	before := snapshot(t, e)
	if want := snapshotAll(t, cur); !reflect.DeepEqual(before, want) {
		t.Fatalf("initial state differs from ComputeAll")
	}
	route := func(name string) *unstructured.Unstructured {
		o := cur[objKey{schema.GroupKind{Group: topology.GatewayGroup, Kind: "HTTPRoute"}, "kg13", name}]
		if o == nil {
			t.Fatalf("no HTTPRoute %s", name)
		}
		return o.DeepCopy()
	}
	preferChild := route("mid-b")
	preferChild.SetAnnotations(map[string]string{topology.InheritedPolicyPriorityAnnotation: "ShallowMergePreferChild"})
	otherParent := route("mid-a")
	if err := unstructured.SetNestedSlice(otherParent.Object, []interface{}{map[string]interface{}{
		"group": topology.GatewayGroup, "kind": "HTTPRoute", "name": "elsewhere"}}, "spec", "parentRefs"); err != nil {
		t.Fatal(err)
	}
	class := cur[objKey{schema.GroupKind{Group: topology.GatewayGroup, Kind: "GatewayClass"}, "", "kg13"}].DeepCopy()
	if err := unstructured.SetNestedField(class.Object, "example.com/other", "spec", "controllerName"); err != nil {
		t.Fatal(err)
	}
	kgClass := class.DeepCopy()
	if err := unstructured.SetNestedField(kgClass.Object, topology.KgatewayController, "spec", "controllerName"); err != nil {
		t.Fatal(err)
	}
	checkMutations(t, e, cur, before, []mutation{
		{name: "a delegating route prefers its children", upsert: []*unstructured.Unstructured{preferChild}},
		{name: "a child names another parent", upsert: []*unstructured.Unstructured{otherParent}},
		{name: "the class is not kgateway's", upsert: []*unstructured.Unstructured{class}},
		{name: "the class is kgateway's again", upsert: []*unstructured.Unstructured{kgClass}},
		{name: "a delegating route goes", del: []objKey{keyOfObj(route("mid-b"))}},
	})
}

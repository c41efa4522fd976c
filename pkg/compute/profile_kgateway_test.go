package compute

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
)

// TestKgatewayPolicyWeightAnnotation: the annotation a descriptor lists (kgateway's
// kgateway.dev/policy-weight) reaches the profile, and changing only it recomputes the
// outputs; other annotations are not kept.
func TestKgatewayPolicyWeightAnnotation(t *testing.T) {
	topo := `
apiVersion: v1
kind: Namespace
metadata: {name: kw}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: kw}
spec:
  gatewayClassName: kw
  listeners: [{name: http, protocol: HTTP, port: 80}]
`
	pols := `
apiVersion: gateway.kgateway.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: older, namespace: kw, annotations: {unrelated: "1"}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  buffer: {maxRequestSize: 1Ki}
---
apiVersion: gateway.kgateway.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: newer, namespace: kw}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  buffer: {maxRequestSize: 2Ki}
`
	objs := append(descriptorCRDs(t, "gateway.kgateway.dev"), worldObjs(t, topo, pols)...)
	e, cur := feedShuffled(nil, objs)
	before := snapshot(t, e)
	older := semantics.PolicyID{GK: schema.GroupKind{Group: "gateway.kgateway.dev", Kind: "TrafficPolicy"}, Namespace: "kw", Name: "older"}
	if p := e.st.att.Policy(older); p == nil || p.Raw["metadata"] != nil {
		t.Errorf("policy missing, or an annotation no descriptor lists was kept: %v", p)
	}
	winner := func() string {
		o, _ := e.Compute(Key{"kw", "gw"})
		return onlyEffective(t, findTP(o, "Gateway", "gateway.kgateway.dev", "TrafficPolicy"), "").FieldSources["/buffer/maxRequestSize"]
	}
	if w := winner(); w != "kw/older" {
		t.Fatalf("without weights the older policy should set buffer, got %s", w)
	}
	var heavier *unstructured.Unstructured
	for _, o := range objs {
		if o.GetName() == "newer" {
			heavier = o.DeepCopy()
		}
	}
	heavier.SetAnnotations(map[string]string{"kgateway.dev/policy-weight": "5"})
	checkMutations(t, e, cur, before, []mutation{{name: "weight only", upsert: []*unstructured.Unstructured{heavier}}})
	if w := winner(); w != "kw/newer" {
		t.Errorf("the heavier policy should set buffer, got %s", w)
	}
}

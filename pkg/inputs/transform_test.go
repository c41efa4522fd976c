package inputs

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"
)

// realisticRoute is an HTTPRoute as an informer receives it from a cluster
// where it was applied with kubectl apply and reconciled by two controllers.
const realisticRoute = `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: baker
  namespace: baker
  uid: 5e1c2f52-5c1a-4c48-9a4e-2d1f3a9b7c11
  resourceVersion: "918273"
  generation: 4
  creationTimestamp: "2026-10-01T08:00:00Z"
  labels:
    app: baker
    team: bread
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","metadata":{"annotations":{},"labels":{"app":"baker","team":"bread"},"name":"baker","namespace":"baker"},"spec":{"hostnames":["baker.example.com"],"parentRefs":[{"name":"gw","namespace":"infra","sectionName":"https"}],"rules":[{"name":"api","matches":[{"path":{"type":"PathPrefix","value":"/api"}}],"backendRefs":[{"name":"baker-api","port":8080,"weight":90},{"name":"baker-api-canary","port":8080,"weight":10}]},{"name":"web","matches":[{"path":{"type":"PathPrefix","value":"/"}}],"filters":[{"type":"RequestMirror","requestMirror":{"backendRef":{"name":"shadow","port":80}}}],"backendRefs":[{"name":"baker-web","port":80}]}]}}
  managedFields:
  - apiVersion: gateway.networking.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:annotations:
          .: {}
          f:kubectl.kubernetes.io/last-applied-configuration: {}
        f:labels:
          .: {}
          f:app: {}
          f:team: {}
      f:spec:
        .: {}
        f:hostnames: {}
        f:parentRefs: {}
        f:rules: {}
    manager: kubectl-client-side-apply
    operation: Update
    time: "2026-10-01T08:00:00Z"
  - apiVersion: gateway.networking.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:status:
        .: {}
        f:parents: {}
    manager: envoy-gateway
    operation: Update
    subresource: status
    time: "2026-10-01T08:00:02Z"
  - apiVersion: gateway.networking.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:status:
        f:parents: {}
    manager: kuadrant-operator
    operation: Update
    subresource: status
    time: "2026-10-01T08:00:03Z"
spec:
  hostnames: [baker.example.com]
  parentRefs:
  - {group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra, sectionName: https}
  rules:
  - name: api
    matches:
    - path: {type: PathPrefix, value: /api}
    backendRefs:
    - {group: "", kind: Service, name: baker-api, port: 8080, weight: 90}
    - {group: "", kind: Service, name: baker-api-canary, port: 8080, weight: 10}
  - name: web
    matches:
    - path: {type: PathPrefix, value: /}
    filters:
    - type: RequestMirror
      requestMirror:
        backendRef: {group: "", kind: Service, name: shadow, port: 80}
    backendRefs:
    - {group: "", kind: Service, name: baker-web, port: 80, weight: 1}
status:
  parents:
  - parentRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra, sectionName: https}
    controllerName: gateway.envoyproxy.io/gatewayclass-controller
    conditions:
    - {type: Accepted, status: "True", reason: Accepted, message: Route is accepted, lastTransitionTime: "2026-10-01T08:00:02Z", observedGeneration: 4}
    - {type: ResolvedRefs, status: "True", reason: ResolvedRefs, message: Resolved all the Object references for the Route, lastTransitionTime: "2026-10-01T08:00:02Z", observedGeneration: 4}
  - parentRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: infra, sectionName: https}
    controllerName: kuadrant.io/policy-controller
    conditions:
    - {type: kuadrant.io/RateLimitPolicyAffected, status: "True", reason: Accepted, message: "Object affected by RateLimitPolicy [baker/limit]", lastTransitionTime: "2026-10-01T08:00:03Z", observedGeneration: 4}
`

func parse(t testing.TB, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func size(t testing.TB, o interface{}) int {
	data, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return len(data)
}

var routeGVK = schema.GroupVersionKind{Group: GatewayAPIGroup, Version: "v1", Kind: "HTTPRoute"}

func TestTrimKeepsWhatTheEngineReads(t *testing.T) {
	in := parse(t, realisticRoute)
	orig := in.DeepCopy()
	outI, err := TransformFor(routeGVK)(in)
	if err != nil {
		t.Fatal(err)
	}
	out := outI.(*unstructured.Unstructured)
	if !reflect.DeepEqual(in, orig) {
		t.Error("transform mutated its input")
	}
	if !reflect.DeepEqual(out.Object["spec"], in.Object["spec"]) {
		t.Error("spec changed")
	}
	md := out.Object["metadata"].(map[string]interface{})
	var keys []string
	for k := range md {
		keys = append(keys, k)
	}
	if got, want := len(keys), 6; got != want {
		t.Errorf("metadata keys %v, want name, namespace, labels, creationTimestamp, uid, resourceVersion", keys)
	}
	for _, gone := range []string{"status"} {
		if _, ok := out.Object[gone]; ok {
			t.Errorf("%s kept", gone)
		}
	}
	if out.GetAnnotations() != nil || out.GetManagedFields() != nil {
		t.Error("annotations or managedFields kept")
	}
	if out.GetCreationTimestamp() != in.GetCreationTimestamp() || out.GetLabels()["team"] != "bread" || out.GroupVersionKind() != routeGVK {
		t.Errorf("lost metadata: %v", out.Object["metadata"])
	}
	again, _ := TransformFor(routeGVK)(out)
	if !reflect.DeepEqual(again, out) {
		t.Error("transform is not idempotent")
	}
	before, after := size(t, in.Object), size(t, out.Object)
	t.Logf("HTTPRoute: %d bytes before, %d after the transform (%.0f%%)", before, after, 100*float64(after)/float64(before))
	if after*2 > before {
		t.Errorf("transform kept %d of %d bytes", after, before)
	}
}

func TestTrimFillsMissingTypeMeta(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]interface{}{"metadata": map[string]interface{}{"name": "x"}}}
	out := Trim(u, schema.GroupVersionKind{Version: "v1", Kind: "Service"})
	if out.GetAPIVersion() != "v1" || out.GetKind() != "Service" {
		t.Errorf("got %s %s", out.GetAPIVersion(), out.GetKind())
	}
	// Tombstones and other types pass through.
	tomb := cache.DeletedFinalStateUnknown{Key: "a/b"}
	if got, _ := TransformFor(routeGVK)(tomb); got != tomb {
		t.Error("tombstone changed")
	}
}

const policyCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: retrypolicies.example.com
  labels: {gateway.networking.k8s.io/policy: inherited}
  annotations: {controller-gen.kubebuilder.io/version: v0.16.0}
  managedFields: [{manager: kubectl, operation: Update}]
spec:
  group: example.com
  scope: Namespaced
  names: {kind: RetryPolicy, plural: retrypolicies, singular: retrypolicy, listKind: RetryPolicyList}
  conversion:
    strategy: Webhook
    webhook:
      clientConfig: {caBundle: TFMwdExTMUNSVWRKVGlCRFJWSlVTVVpKUTBGVVJTMHRMUzB0Q2sxSlNVTXZSRU5EUVdWVFowRjNTVUpCWjBsQ1FVUkJUa0puYTNGb2EybEhPWGN3UWtGUmMwWkJSRUZXVFZKTmQwVlJXVVJXVVZGRVJYZHdjbVJYU213,
        service: {name: conv, namespace: x}}
      conversionReviewVersions: [v1]
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns: [{name: Age, type: date, jsonPath: .metadata.creationTimestamp}]
    schema:
      openAPIV3Schema:
        type: object
        description: RetryPolicy retries requests. A long text that explains everything about retries.
        properties:
          spec:
            type: object
            description: Spec of the policy.
            x-kubernetes-validations: [{rule: "has(self.targetRef) || has(self.targetRefs)", message: one target}]
            properties:
              description: {type: string, description: a property named description}
              targetRefs:
                type: array
                maxItems: 16
                description: Targets.
                items:
                  type: object
                  properties:
                    group: {type: string, description: Group.}
                    kind: {type: string}
                    name: {type: string}
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [group, kind, name]
              defaults:
                type: object
                properties:
                  headers:
                    type: array
                    x-kubernetes-list-type: map
                    x-kubernetes-list-map-keys: [name]
                    items: {type: object, properties: {name: {type: string}, value: {type: string, example: x}}}
                  anything:
                    x-kubernetes-preserve-unknown-fields: true
                    anyOf: [{type: integer}, {type: string, description: a string}]
          status: {type: object, description: Status., x-kubernetes-preserve-unknown-fields: true}
  - name: v1alpha1
    served: false
    storage: false
    deprecated: true
    schema: {openAPIV3Schema: {type: object, description: old}}
status:
  acceptedNames: {kind: RetryPolicy, plural: retrypolicies}
  storedVersions: [v1alpha1, v1]
  conditions: [{type: Established, status: "True"}]
`

const wantTrimmedCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: retrypolicies.example.com
  labels: {gateway.networking.k8s.io/policy: inherited}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: RetryPolicy, plural: retrypolicies, singular: retrypolicy, listKind: RetryPolicyList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              description: {type: string}
              targetRefs:
                type: array
                maxItems: 16
                items:
                  type: object
                  properties:
                    group: {type: string}
                    kind: {type: string}
                    name: {type: string}
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [group, kind, name]
              defaults:
                type: object
                properties:
                  headers:
                    type: array
                    x-kubernetes-list-type: map
                    x-kubernetes-list-map-keys: [name]
                    items: {type: object, properties: {name: {type: string}, value: {type: string}}}
                  anything:
                    x-kubernetes-preserve-unknown-fields: true
                    anyOf: [{type: integer}, {type: string}]
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
  - name: v1alpha1
    served: false
    storage: false
    schema: {openAPIV3Schema: {type: object}}
`

func TestTrimCRD(t *testing.T) {
	in := parse(t, policyCRD)
	out, err := TransformFor(CRDResource.GroupVersion().WithKind("CustomResourceDefinition"))(in)
	if err != nil {
		t.Fatal(err)
	}
	want := parse(t, wantTrimmedCRD)
	if !reflect.DeepEqual(out.(*unstructured.Unstructured).Object, want.Object) {
		got, _ := yaml.Marshal(out.(*unstructured.Unstructured).Object)
		t.Errorf("trimmed CRD:\n%s", got)
	}
	t.Logf("CRD: %d bytes before, %d after", size(t, in.Object), size(t, out.(*unstructured.Unstructured).Object))
}

func TestServedVersion(t *testing.T) {
	tests := []struct {
		versions string
		want     string
	}{
		{`[{name: v1, served: true, storage: true}]`, "v1"},
		{`[{name: v1alpha2, served: true, storage: false}, {name: v1, served: true, storage: true}]`, "v1"},
		{`[{name: v1alpha2, served: true, storage: false}, {name: v1, served: false, storage: true}]`, "v1alpha2"},
		{`[{name: v1, served: false, storage: true}]`, ""},
		{`[]`, ""},
		{`"garbage"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.versions, func(t *testing.T) {
			u := parse(t, fmt.Sprintf("spec: {versions: %s}", tt.versions))
			if got := ServedVersion(u); got != tt.want {
				t.Errorf("ServedVersion = %q, want %q", got, tt.want)
			}
		})
	}
}

// BenchmarkTransformHTTPRoute reports the bytes an HTTPRoute takes in an
// informer cache (as JSON) before and after the transform.
func BenchmarkTransformHTTPRoute(b *testing.B) {
	in := parse(b, realisticRoute)
	tf := TransformFor(routeGVK)
	var out interface{}
	for i := 0; i < b.N; i++ {
		out, _ = tf(in)
	}
	b.ReportMetric(float64(size(b, in.Object)), "bytes-before")
	b.ReportMetric(float64(size(b, out.(*unstructured.Unstructured).Object)), "bytes-after")
}

// TestTrimCoreSpecs: a Service keeps only spec.ports (whole), a Namespace
// no spec; other kinds keep their spec whole; a malformed spec does not
// crash the transform.
func TestTrimCoreSpecs(t *testing.T) {
	svcGVK := schema.GroupVersionKind{Version: "v1", Kind: "Service"}
	nsGVK := schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	for _, tc := range []struct {
		name string
		gvk  schema.GroupVersionKind
		in   string
		want string // spec as JSON; "" for no spec
	}{
		{"service", svcGVK, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s","namespace":"n"},"spec":{"clusterIP":"10.0.0.1","clusterIPs":["10.0.0.1"],"ipFamilies":["IPv4"],"selector":{"app":"a"},"type":"ClusterIP","ports":[{"name":"http","port":80,"protocol":"TCP","targetPort":8080}]}}`,
			`{"ports":[{"name":"http","port":80,"protocol":"TCP","targetPort":8080}]}`},
		{"service without ports", svcGVK, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s","namespace":"n"},"spec":{"type":"ExternalName","externalName":"x.example.com"}}`, `{}`},
		{"service with a malformed spec", svcGVK, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s","namespace":"n"},"spec":"nonsense"}`, `{}`},
		{"service without spec", svcGVK, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s","namespace":"n"}}`, ``},
		{"namespace", nsGVK, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n","labels":{"a":"b"}},"spec":{"finalizers":["kubernetes"]}}`, ``},
		{"gateway keeps its spec", schema.GroupVersionKind{Group: GatewayAPIGroup, Version: "v1", Kind: "Gateway"}, `{"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway","metadata":{"name":"g","namespace":"n"},"spec":{"gatewayClassName":"c","addresses":[{"value":"1.2.3.4"}]}}`,
			`{"addresses":[{"value":"1.2.3.4"}],"gatewayClassName":"c"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &unstructured.Unstructured{}
			if err := json.Unmarshal([]byte(tc.in), &in.Object); err != nil {
				t.Fatal(err)
			}
			orig := in.DeepCopy()
			outI, err := TransformFor(tc.gvk)(in)
			if err != nil {
				t.Fatal(err)
			}
			out := outI.(*unstructured.Unstructured)
			if !reflect.DeepEqual(in, orig) {
				t.Error("transform mutated its input")
			}
			spec, ok := out.Object["spec"]
			got := ""
			if ok {
				b, _ := json.Marshal(spec)
				got = string(b)
			}
			if got != tc.want {
				t.Errorf("spec %s, want %s", got, tc.want)
			}
			again, _ := TransformFor(tc.gvk)(out)
			if !reflect.DeepEqual(again, out) {
				t.Error("transform is not idempotent")
			}
			if out.GetName() != orig.GetName() || !reflect.DeepEqual(out.GetLabels(), orig.GetLabels()) {
				t.Errorf("lost metadata: %v", out.Object["metadata"])
			}
		})
	}
}

package compute

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// testCRDs: an inherited RetryPolicy (list-map "listMaps" keyed by name,
// targetRefs maxItems 4) and a Direct TimeoutPolicy, both by label.
const testCRDs = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: retrypolicies.example.com
  labels: {gateway.networking.k8s.io/policy: Inherited}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: RetryPolicy, plural: retrypolicies}
  versions:
  - name: v1alpha1
    served: true
    storage: false
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
            properties:
              targetRefs: {type: array, maxItems: 4, items: {type: object, x-kubernetes-preserve-unknown-fields: true}}
              listMaps: &lm
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items: {type: object, x-kubernetes-preserve-unknown-fields: true}
              defaults:
                type: object
                x-kubernetes-preserve-unknown-fields: true
                properties: {listMaps: *lm}
              overrides:
                type: object
                x-kubernetes-preserve-unknown-fields: true
                properties: {listMaps: *lm}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: timeoutpolicies.example.com
  labels: {gateway.networking.k8s.io/policy: direct}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: TimeoutPolicy, plural: timeoutpolicies}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clusterretrypolicies.example.com
  labels: {gateway.networking.k8s.io/policy: INHERITED}
spec:
  group: example.com
  scope: Cluster
  names: {kind: ClusterRetryPolicy, plural: clusterretrypolicies}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// baseTopology: GatewayClass gc; Namespace appns (team=a) and other (team=b);
// Gateway gw (listeners http:80, https:443) in appns; HTTPRoute rt in appns
// on gw with rules "main" (backend svc) and an unnamed one (backend svc2);
// Services svc (port http) and svc2.
const baseTopology = `
apiVersion: v1
kind: Namespace
metadata: {name: appns, labels: {team: a}}
---
apiVersion: v1
kind: Namespace
metadata: {name: other, labels: {team: b}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gc}
spec: {controllerName: example.com/c}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: appns}
spec:
  gatewayClassName: gc
  listeners:
  - {name: http, port: 80, protocol: HTTP}
  - {name: https, port: 443, protocol: HTTPS}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: rt, namespace: appns}
spec:
  parentRefs: [{name: gw}]
  rules:
  - name: main
    backendRefs: [{name: svc, port: 80}]
  - backendRefs: [{name: svc2, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: appns}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: svc2, namespace: appns}
spec: {ports: [{port: 80}]}
`

// world computes CRDs + topology + policies (policies stamped one second
// apart in order).
func world(t testing.TB, topology, policies string, opts ...Options) map[Key]runtime.Object {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	got, err := ComputeAll(worldObjs(t, topology, policies), o)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func worldObjs(t testing.TB, topology, policies string) []*unstructured.Unstructured {
	objs := parseDocs(t, testCRDs)
	objs = append(objs, parseDocs(t, topology)...)
	return append(objs, stamp(parseDocs(t, policies), 0)...)
}

const (
	retryG = "example.com"
	retryK = "RetryPolicy"
)

// effAt returns the effective entries of a target/policy kind in a result.
func effAt(t testing.TB, got map[Key]runtime.Object, key Key, targetKind, pkind string) *v1alpha1.TargetPolicy {
	t.Helper()
	obj, ok := got[key]
	if !ok {
		t.Fatalf("%v: no output", key)
	}
	tp := findTP(obj, targetKind, retryG, pkind)
	if tp == nil {
		t.Fatalf("%v: no %s on %s:\n%s", key, pkind, targetKind, dump(obj))
	}
	return tp
}

// onlyEffective returns the single effective entry with the given section.
func onlyEffective(t testing.TB, tp *v1alpha1.TargetPolicy, section string) v1alpha1.EffectiveSpec {
	t.Helper()
	var found []v1alpha1.EffectiveSpec
	for _, e := range tp.Effective {
		if e.SectionName == section {
			found = append(found, e)
		}
	}
	if len(found) != 1 {
		b, _ := json.MarshalIndent(tp, "", " ")
		t.Fatalf("want 1 effective entry for section %q, got %d:\n%s", section, len(found), b)
	}
	return found[0]
}

func sourceOutcome(tp *v1alpha1.TargetPolicy, name string, stanza v1alpha1.Stanza) (v1alpha1.Outcome, string) {
	for _, s := range tp.Sources {
		n := s.Name
		if s.Namespace != "" {
			n = s.Namespace + "/" + s.Name
		}
		if n == name && (stanza == "*" || s.Stanza == stanza) {
			return s.Outcome, s.Message
		}
	}
	return "", ""
}

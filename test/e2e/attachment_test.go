//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	versioned "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned"
)

// TestAttachmentRules runs the Gateway API's attachment rules through the real API: a policy
// kind known only by its CRD schema (no label, no descriptor), a route that attaches through
// only the listener whose hostname it intersects, and a backend in another namespace that
// hangs under the route only while a ReferenceGrant allows it; a mesh route under a Service's
// port, reached by the port's policy only while the parentRef selects that port.
func TestAttachmentRules(t *testing.T) {
	const app, be = "e2e-attach-app", "e2e-attach-be"
	createNamespace(t, app)
	createNamespace(t, be)
	installReachPolicyKind(t)
	kubectlApply(t, fmt.Sprintf(attachTopology, app, be))
	cs := clientset(t, "")
	ctx := context.Background()
	want := func(ns, name, targetKind, spec string) func() error {
		return func() error {
			got, err := attachedReachSpec(ctx, cs, ns, name, targetKind)
			if err != nil {
				return err
			}
			if got != spec {
				return fmt.Errorf("%s/%s %s: ReachPolicy spec %q, want %q", ns, name, targetKind, got, spec)
			}
			return nil
		}
	}
	// bar.example.com attaches through *.example.com, not foo.example.com; the Service in the
	// other namespace has no grant yet, so nothing reaches it.
	eventually(t, time.Minute, "route reached through the wildcard listener only", want(app, "rt", "HTTPRoute", `{"from":"wild"}`))
	eventually(t, time.Minute, "no path to the ungranted backend", want(be, "svc", "Service", ""))

	kubectlApply(t, fmt.Sprintf(attachGrant, be, app))
	eventually(t, time.Minute, "the granted backend under the route", want(be, "svc", "Service", `{"from":"wild"}`))
	kubectl(t, "delete", "referencegrant", "from-app", "-n", be)
	eventually(t, time.Minute, "the backend gone with its grant", want(be, "svc", "Service", ""))

	// The route's hostnames change to the exact listener's: both listeners now match.
	kubectl(t, "patch", "httproute", "rt", "-n", app, "--type=merge", "-p", `{"spec":{"hostnames":["foo.example.com"]}}`)
	eventually(t, time.Minute, "route reached through both listeners", func() error {
		return reachedThroughBothListeners(ctx, cs, app)
	})

	// A mesh (GAMMA) route hangs under the Service port its parentRef selects.
	kubectlApply(t, fmt.Sprintf(attachMesh, app))
	eventually(t, time.Minute, "mesh route under the Service port", want(app, "mesh-rt", "HTTPRoute", `{"from":"mesh"}`))
	kubectl(t, "patch", "httproute", "mesh-rt", "-n", app, "--type=json", "-p", `[{"op":"replace","path":"/spec/parentRefs/0/port","value":9999}]`)
	eventually(t, time.Minute, "no path through a port the Service lacks", want(app, "mesh-rt", "HTTPRoute", ""))
}

// installReachPolicyKind installs the ReachPolicy CRD (known by its schema
// only) and a ClusterRole that lets the server read it, removed when the test
// ends, and waits for the CRD to be established.
func installReachPolicyKind(t *testing.T) {
	t.Helper()
	kubectlApply(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: reachpolicies.attach.e2e.example}
spec:
  group: attach.e2e.example
  scope: Namespaced
  names: {kind: ReachPolicy, plural: reachpolicies, singular: reachpolicy, listKind: ReachPolicyList}
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
              targetRefs:
                type: array
                items:
                  type: object
                  properties: {group: {type: string}, kind: {type: string}, name: {type: string}, sectionName: {type: string}}
              defaults: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: effectivepolicy-e2e:read-reachpolicies
  labels: {effectivepolicy.dev/aggregate-to-reader: "true"}
rules:
- apiGroups: [attach.e2e.example]
  resources: [reachpolicies]
  verbs: [get, list, watch]
`)
	t.Cleanup(func() {
		_, _, _ = kubectlRaw(nil, "delete", "crd", "reachpolicies.attach.e2e.example", "--ignore-not-found")
		_, _, _ = kubectlRaw(nil, "delete", "clusterrole", "effectivepolicy-e2e:read-reachpolicies", "--ignore-not-found")
	})
	waitCondition(t, "Established", "crd/reachpolicies.attach.e2e.example")
}

// attachTopology (app namespace, backend namespace): Gateway gw with
// listeners foo (foo.example.com) and wild (*.example.com), HTTPRoute rt for
// bar.example.com to Service svc of the backend namespace, and a ReachPolicy
// on each listener.
const attachTopology = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: %[1]s}
spec:
  gatewayClassName: e2e-attach
  listeners:
  - {name: foo, port: 80, protocol: HTTP, hostname: foo.example.com}
  - {name: wild, port: 80, protocol: HTTP, hostname: "*.example.com"}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: rt, namespace: %[1]s}
spec:
  parentRefs: [{name: gw}]
  hostnames: [bar.example.com]
  rules: [{backendRefs: [{name: svc, namespace: %[2]s, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: %[2]s}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: attach.e2e.example/v1
kind: ReachPolicy
metadata: {name: on-foo, namespace: %[1]s}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: foo}]
  defaults: {from: foo}
---
apiVersion: attach.e2e.example/v1
kind: ReachPolicy
metadata: {name: on-wild, namespace: %[1]s}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: wild}]
  defaults: {from: wild}
`

// attachGrant (backend namespace, app namespace) lets HTTPRoutes of the app
// namespace send to Services of the backend namespace.
const attachGrant = `
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: from-app, namespace: %s}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: %s}]
  to: [{group: "", kind: Service}]
`

// attachMesh (namespace): Service mesh, a mesh HTTPRoute mesh-rt on its port
// 8080, and a ReachPolicy on the port.
const attachMesh = `
apiVersion: v1
kind: Service
metadata: {name: mesh, namespace: %[1]s}
spec: {ports: [{name: http, port: 8080}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: mesh-rt, namespace: %[1]s}
spec:
  parentRefs: [{group: "", kind: Service, name: mesh, port: 8080}]
  rules: [{backendRefs: [{name: mesh, port: 8080}]}]
---
apiVersion: attach.e2e.example/v1
kind: ReachPolicy
metadata: {name: on-mesh-port, namespace: %[1]s}
spec:
  targetRefs: [{group: "", kind: Service, name: mesh, sectionName: http}]
  defaults: {from: mesh}
`

// attachedReachSpec is the spec of the ReachPolicy in the EffectivePolicy
// ns/name for its target of targetKind ("" when there is none).
func attachedReachSpec(ctx context.Context, cs *versioned.Clientset, ns, name, targetKind string) (string, error) {
	ep, err := cs.EffectivepolicyV1alpha1().EffectivePolicies(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	tp := findTargetPolicy(ep, targetKind, "attach.e2e.example", "ReachPolicy")
	if tp == nil {
		return "", nil
	}
	if tp.Class != v1alpha1.ClassInherited || len(tp.Effective) != 1 {
		return "", fmt.Errorf("%s/%s: class %s, %d effective entries", ns, name, tp.Class, len(tp.Effective))
	}
	return string(tp.Effective[0].Spec.Raw), nil
}

// reachedThroughBothListeners: route rt of namespace app has two ReachPolicy
// contexts.
func reachedThroughBothListeners(ctx context.Context, cs *versioned.Clientset, app string) error {
	ep, err := cs.EffectivepolicyV1alpha1().EffectivePolicies(app).Get(ctx, "rt", metav1.GetOptions{})
	if err != nil {
		return err
	}
	tp := findTargetPolicy(ep, "HTTPRoute", "attach.e2e.example", "ReachPolicy")
	if tp == nil || len(tp.Effective) != 2 {
		return fmt.Errorf("want two contexts (foo and wild), got %+v", tp)
	}
	return nil
}

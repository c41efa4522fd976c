package registry_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/access"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/access/accesstest"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/registry"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/requesttrace"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/versioned"
)

func traceOf(host, path string, headers map[string]string) *v1alpha1.RequestTrace {
	return &v1alpha1.RequestTrace{Spec: v1alpha1.RequestTraceSpec{Request: v1alpha1.TracedRequest{Host: host, Path: path, Headers: headers}}}
}

const traceWorld = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: retrypolicies.example.com
  labels: {gateway.networking.k8s.io/policy: inherited}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: RetryPolicy, plural: retrypolicies}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gc}
spec: {controllerName: example.com/c}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: gc
  listeners: [{name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: baker, namespace: baker}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  hostnames: [baker.example.com]
  rules: [{backendRefs: [{name: baker, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: baker, namespace: baker}
spec: {ports: [{port: 80}]}
---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: retry-all, namespace: baker}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: baker}]
  retries: 3
`

type traceSource struct {
	topo requesttrace.Topology
	err  error
}

func (s traceSource) TraceTopology(context.Context) (requesttrace.Topology, error) {
	return s.topo, s.err
}

// traceServer returns the REST storage of requesttraces over an engine fed
// with traceWorld and a store of its outputs.
func traceServer(t testing.TB, authz *accesstest.EffectivePolicyAuthorizer) (*registry.TraceREST, *compute.Engine) {
	t.Helper()
	e, err := compute.NewEngine(compute.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewYAMLOrJSONDecoder(strings.NewReader(traceWorld), 4096)
	for {
		var m map[string]interface{}
		if err := dec.Decode(&m); err != nil {
			break
		}
		e.Upsert(&unstructured.Unstructured{Object: m})
	}
	s := versioned.New[*encoded.Object](versioned.Options{})
	var changes []versioned.Change[*encoded.Object]
	for _, k := range e.Keys() {
		if k.Namespace == "" {
			continue
		}
		obj, _ := e.Compute(k)
		ep := obj.(*v1alpha1.EffectivePolicy)
		ep.Namespace, ep.Name = k.Namespace, k.Name
		changes = append(changes, versioned.Change[*encoded.Object]{Namespace: k.Namespace, Name: k.Name, Object: encoded.MustNew(ep)})
	}
	s.Apply(changes)
	var checker *access.Checker
	if authz != nil {
		checker = access.NewChecker(authz, 0)
	}
	return registry.NewTraceREST(traceSource{topo: e}, s, checker, nil), e
}

func TestTraceRESTCreate(t *testing.T) {
	cases := []struct {
		name       string
		namespaces map[string]bool // nil: no authorizer
		gateway    *v1alpha1.GatewayReference
		check      func(t *testing.T, out *v1alpha1.RequestTrace, err error)
	}{
		{"everything visible", nil, nil, func(t *testing.T, out *v1alpha1.RequestTrace, err error) {
			if err != nil {
				t.Fatal(err)
			}
			ms := out.Status.Matches
			if len(ms) != 1 || ms[0].Route == nil || ms[0].Route.Name != "baker" || len(ms[0].Policies) != 1 || ms[0].Policies[0].Kind != "RetryPolicy" {
				t.Fatalf("status %+v", out.Status)
			}
			if string(ms[0].Policies[0].Spec.Raw) != `{"retries":3}` {
				t.Errorf("spec %s", ms[0].Policies[0].Spec.Raw)
			}
		}},
		{"the Gateway's namespace hidden, the route's not", map[string]bool{"baker": true}, nil, func(t *testing.T, out *v1alpha1.RequestTrace, err error) {
			if err != nil {
				t.Fatal(err)
			}
			ms := out.Status.Matches
			if len(ms) != 1 || ms[0].Route == nil || len(ms[0].Policies) != 1 || out.Status.HiddenMatches != 0 {
				t.Fatalf("status %+v", out.Status)
			}
		}},
		{"nothing visible", map[string]bool{}, nil, func(t *testing.T, out *v1alpha1.RequestTrace, err error) {
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Status.Matches) != 0 || out.Status.HiddenMatches != 1 {
				t.Fatalf("status %+v", out.Status)
			}
		}},
		{"the route's namespace hidden", map[string]bool{"infra": true}, nil, func(t *testing.T, out *v1alpha1.RequestTrace, err error) {
			if err != nil {
				t.Fatal(err)
			}
			ms := out.Status.Matches
			if len(ms) != 1 || ms[0].Reason != requesttrace.ReasonRouteHidden || ms[0].Route != nil || len(ms[0].Policies) != 0 || len(ms[0].Backends) != 0 {
				t.Fatalf("status %+v", out.Status)
			}
		}},
		{"a named Gateway in a hidden namespace", map[string]bool{"baker": true}, &v1alpha1.GatewayReference{Namespace: "infra", Name: "gw"}, func(t *testing.T, _ *v1alpha1.RequestTrace, err error) {
			if !apierrors.IsForbidden(err) {
				t.Fatalf("want 403, got %v", err)
			}
		}},
		{"an unknown Gateway", nil, &v1alpha1.GatewayReference{Namespace: "infra", Name: "nope"}, func(t *testing.T, _ *v1alpha1.RequestTrace, err error) {
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.gateway") {
				t.Fatalf("want 422 on spec.gateway, got %v", err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var authz *accesstest.EffectivePolicyAuthorizer
			if tc.namespaces != nil {
				authz = &accesstest.EffectivePolicyAuthorizer{Namespaces: tc.namespaces}
			}
			r, _ := traceServer(t, authz)
			in := traceOf("baker.example.com", "/", nil)
			in.Spec.Gateway = tc.gateway
			out, err := r.Create(userCtx("ana"), in, nil, &metav1.CreateOptions{})
			var rt *v1alpha1.RequestTrace
			if err == nil {
				rt = out.(*v1alpha1.RequestTrace)
			}
			tc.check(t, rt, err)
		})
	}
}

func TestTraceRESTErrors(t *testing.T) {
	r, _ := traceServer(t, nil)
	if _, err := r.Create(userCtx("ana"), traceOf("", "/", nil), nil, &metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("missing host: want 422, got %v", err)
	}
	busy := registry.NewTraceREST(traceSource{err: errors.New("computing")}, versioned.New[*encoded.Object](versioned.Options{}), nil, nil)
	if _, err := busy.Create(userCtx("ana"), traceOf("a", "/", nil), nil, &metav1.CreateOptions{}); !apierrors.IsServiceUnavailable(err) {
		t.Errorf("source not ready: want 503, got %v", err)
	}
	if _, err := r.Create(userCtx("ana"), &v1alpha1.EffectivePolicy{}, nil, &metav1.CreateOptions{}); !apierrors.IsBadRequest(err) {
		t.Errorf("another kind: want 400, got %v", err)
	}
}

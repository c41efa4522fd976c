//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

const (
	traceInfra = "e2e-trace-infra"
	traceApp   = "e2e-trace-app"
	traceAdmin = "e2e-trace-infra-admin" // the shipped reader role in traceInfra only
)

// traceYAML is the RequestTrace kubectl creates: Ana's GET of /orders.
const traceYAML = `apiVersion: effectivepolicy.dev/v1alpha1
kind: RequestTrace
spec:
  port: 80
  request: {host: app.example.com, method: GET, path: /orders/42}
`

// TestRequestTrace: what happens to a request (docs/spec.md §9) through the real kube-apiserver:
// kubectl create -o json prints the answer; the rule's and the backend's effective entries are
// those of the request's context; a caller who may read only the Gateway's namespace learns
// that a hidden route serves the request and nothing of it; bad input gets 422 or 413, and
// every verb but create 405.
func TestRequestTrace(t *testing.T) {
	applyColorPolicyCRDs(t)
	createNamespace(t, traceInfra)
	createNamespace(t, traceApp)
	kubectlApply(t, fmt.Sprintf(traceTopology, traceInfra, traceApp))

	// kubectl create -f trace.yaml prints the answer (nothing is stored).
	checkOrdersTraceByKubectl(t)

	ctx := context.Background()
	// Through the generated client: GET / takes the unnamed rule, where only the Gateway's amber applies.
	checkTracesByClient(ctx, t)

	// An admin of infra alone: the Gateway, and that a hidden route serves the request.
	checkInfraAdminTrace(ctx, t)
	// Ana, with view in the application's namespace only: her route is served, so the Gateway
	// that brings the request to it is named (her route's parentRefs name it too).
	checkAnaTrace(ctx, t)
	// A user with no binding at all may trace (system:authenticated), and sees nothing named.
	checkStrangerTrace(ctx, t)

	testTraceBadInput(t)
}

// traceTopology (infra namespace, application namespace): GatewayClass
// e2e-trace, Gateway gw, HTTPRoute app for app.example.com with rule orders
// (PathPrefix /orders, to Service orders) and an unnamed one (to Service
// web), ColorPolicy amber on gw and orders-blue on the rule orders.
const traceTopology = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: e2e-trace}
spec: {controllerName: example.com/e2e-trace}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: %[1]s}
spec:
  gatewayClassName: e2e-trace
  listeners:
  - {name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app, namespace: %[2]s}
spec:
  parentRefs: [{name: gw, namespace: %[1]s}]
  hostnames: [app.example.com]
  rules:
  - name: orders
    matches: [{path: {type: PathPrefix, value: /orders}}]
    backendRefs: [{name: orders, port: 80}]
  - backendRefs: [{name: web, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: orders, namespace: %[2]s}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: %[2]s}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: colors.example.com/v1
kind: ColorPolicy
metadata: {name: amber, namespace: %[1]s}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  color: amber
---
apiVersion: colors.example.com/v1
kind: ColorPolicy
metadata: {name: orders-blue, namespace: %[2]s}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: app, sectionName: orders}]
  color: blue
`

// checkOrdersTraceByKubectl traces GET /orders/42 (traceYAML) with kubectl
// create: rule orders, its backend, and blue on both.
func checkOrdersTraceByKubectl(t *testing.T) {
	t.Helper()
	var rt v1alpha1.RequestTrace
	eventually(t, 60*time.Second, "the trace of GET /orders/42", func() error {
		out, _, err := kubectlRaw([]byte(traceYAML), "create", "-f", "-", "-o", "json")
		if err != nil {
			return err
		}
		rt = v1alpha1.RequestTrace{}
		if err := json.Unmarshal([]byte(out), &rt); err != nil {
			return err
		}
		m := onlyMatch(rt.Status, "gw")
		if m == nil || m.Route == nil || m.Rule == nil || m.Rule.Name != "orders" || len(m.Policies) != 1 || len(m.BackendPolicies) != 1 {
			return fmt.Errorf("status %+v", rt.Status)
		}
		return nil
	})
	m := onlyMatch(rt.Status, "gw")
	if m.Listener != "http" || m.Route.Namespace != traceApp || m.Route.Name != "app" || m.Reason != "Matched" ||
		len(m.Backends) != 1 || m.Backends[0].Ref.Name != "orders" || m.Backends[0].Weight != 1 {
		t.Errorf("match %+v", m)
	}
	if p := m.Policies[0]; compactJSON(p.Spec.Raw) != `{"color":"blue"}` || p.SectionName != "orders" || len(p.Via) != 2 || p.Via[0].Kind != "Gateway" || p.Via[1].SectionName != "orders" {
		t.Errorf("the rule's entry %+v (%s)", p, p.Spec.Raw)
	}
	if p := m.BackendPolicies[0]; p.Backend == nil || p.Backend.Name != "orders" || compactJSON(p.Spec.Raw) != `{"color":"blue"}` {
		t.Errorf("the backend's entry %+v (%s)", p, p.Spec.Raw)
	}

}

// checkTracesByClient: GET / takes the unnamed rule, where only amber
// applies; another host is not served.
func checkTracesByClient(ctx context.Context, t *testing.T) {
	t.Helper()
	cs := clientset(t, "").EffectivepolicyV1alpha1()
	root, err := cs.RequestTraces().Create(ctx, &v1alpha1.RequestTrace{Spec: v1alpha1.RequestTraceSpec{
		Gateway: &v1alpha1.GatewayReference{Namespace: traceInfra, Name: "gw"},
		Request: v1alpha1.TracedRequest{Host: "app.example.com", Path: "/"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := onlyMatch(root.Status, "gw"); m == nil || m.Rule == nil || m.Rule.Index != 1 || len(m.Policies) != 1 || string(m.Policies[0].Spec.Raw) != `{"color":"amber"}` {
		t.Errorf("GET /: %+v", root.Status)
	}
	miss, err := cs.RequestTraces().Create(ctx, &v1alpha1.RequestTrace{Spec: v1alpha1.RequestTraceSpec{
		Gateway: &v1alpha1.GatewayReference{Namespace: traceInfra, Name: "gw"},
		Request: v1alpha1.TracedRequest{Host: "other.example.com", Path: "/"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := onlyMatch(miss.Status, "gw"); m == nil || m.Reason != "NoRouteForHost" || m.Message == "" || miss.Status.Message == "" {
		t.Errorf("another host: %+v", miss.Status)
	}

}

// checkInfraAdminTrace: an admin of infra alone sees the Gateway, and that a
// hidden route serves the request.
func checkInfraAdminTrace(ctx context.Context, t *testing.T) {
	t.Helper()
	kubectl(t, "create", "rolebinding", "infra-admin", "--clusterrole=effectivepolicy.dev:view-effectivepolicies", "--user="+traceAdmin, "-n", traceInfra)
	eventually(t, 30*time.Second, "binding of "+traceAdmin, func() error {
		_, _, err := kubectlRaw(nil, "auth", "can-i", "get", "effectivepolicies.effectivepolicy.dev", "--as", traceAdmin, "-n", traceInfra)
		return err
	})
	admin := clientset(t, traceAdmin).EffectivepolicyV1alpha1()
	hidden, err := admin.RequestTraces().Create(ctx, &v1alpha1.RequestTrace{Spec: v1alpha1.RequestTraceSpec{
		Request: v1alpha1.TracedRequest{Host: "app.example.com", Path: "/orders"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(hidden.Status)
	if m := onlyMatch(hidden.Status, "gw"); m == nil || m.Reason != "RouteHidden" || strings.Contains(string(body), traceApp) || strings.Contains(string(body), "orders-blue") {
		t.Errorf("infra admin's view: %s", body)
	}
}

// checkAnaTrace: Ana, with view in the application's namespace only, sees
// her route and its policy.
func checkAnaTrace(ctx context.Context, t *testing.T) {
	t.Helper()
	kubectl(t, "create", "rolebinding", "ana", "--clusterrole=view", "--user=e2e-trace-ana", "-n", traceApp)
	eventually(t, 30*time.Second, "binding of e2e-trace-ana", func() error {
		_, _, err := kubectlRaw(nil, "auth", "can-i", "get", "effectivepolicies.effectivepolicy.dev", "--as", "e2e-trace-ana", "-n", traceApp)
		return err
	})
	ana, err := clientset(t, "e2e-trace-ana").EffectivepolicyV1alpha1().RequestTraces().Create(ctx, &v1alpha1.RequestTrace{Spec: v1alpha1.RequestTraceSpec{
		Request: v1alpha1.TracedRequest{Host: "app.example.com", Path: "/orders"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := onlyMatch(ana.Status, "gw"); m == nil || m.Route == nil || m.Rule == nil || m.Rule.Name != "orders" || len(m.Policies) != 1 {
		t.Errorf("Ana's view: %+v", ana.Status)
	}
}

// checkStrangerTrace: a user with no binding may trace, sees nothing named,
// and may not name the Gateway.
func checkStrangerTrace(ctx context.Context, t *testing.T) {
	t.Helper()
	stranger, err := clientset(t, "e2e-trace-stranger").EffectivepolicyV1alpha1().RequestTraces().Create(ctx, &v1alpha1.RequestTrace{Spec: v1alpha1.RequestTraceSpec{
		Request: v1alpha1.TracedRequest{Host: "app.example.com", Path: "/orders"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if body, _ := json.Marshal(stranger.Status); len(stranger.Status.Matches) != 0 || stranger.Status.HiddenMatches < 1 || strings.Contains(string(body), traceInfra) {
		t.Errorf("stranger's view: %s", body)
	}
	if _, err := clientset(t, "e2e-trace-stranger").EffectivepolicyV1alpha1().RequestTraces().Create(ctx, &v1alpha1.RequestTrace{Spec: v1alpha1.RequestTraceSpec{
		Gateway: &v1alpha1.GatewayReference{Namespace: traceInfra, Name: "gw"},
		Request: v1alpha1.TracedRequest{Host: "app.example.com"},
	}}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("stranger naming the Gateway: want 403, got %v", err)
	}

}

// compactJSON drops the indentation kubectl -o json adds inside a spec.
func compactJSON(raw []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// onlyMatch returns the status's match on Gateway name (nil unless there is exactly one match).
func onlyMatch(s v1alpha1.RequestTraceStatus, gateway string) *v1alpha1.TraceMatch {
	var found *v1alpha1.TraceMatch
	for i := range s.Matches {
		if s.Matches[i].Gateway.Name == gateway && s.Matches[i].Gateway.Namespace == traceInfra {
			if found != nil {
				return nil
			}
			found = &s.Matches[i]
		}
	}
	return found
}

func testTraceBadInput(t *testing.T) {
	ctx := context.Background()
	cs := clientset(t, "").EffectivepolicyV1alpha1()
	headers := map[string]string{}
	for i := 0; i < 10000; i++ {
		headers[fmt.Sprintf("x-h-%d", i)] = "v"
	}
	cases := []struct {
		name string
		spec v1alpha1.RequestTraceSpec
		want string // the field the 422 names
	}{
		{"missing host", v1alpha1.RequestTraceSpec{Request: v1alpha1.TracedRequest{Path: "/"}}, "spec.request.host"},
		{"absurd path", v1alpha1.RequestTraceSpec{Request: v1alpha1.TracedRequest{Host: "a.example.com", Path: "/" + strings.Repeat("x", 20000)}}, "spec.request.path"},
		{"10,000 headers", v1alpha1.RequestTraceSpec{Request: v1alpha1.TracedRequest{Host: "a.example.com", Headers: headers}}, "spec.request.headers"},
		{"unknown Gateway", v1alpha1.RequestTraceSpec{Gateway: &v1alpha1.GatewayReference{Namespace: traceInfra, Name: "nope"}, Request: v1alpha1.TracedRequest{Host: "a.example.com"}}, "spec.gateway"},
	}
	for _, tc := range cases {
		_, err := cs.RequestTraces().Create(ctx, &v1alpha1.RequestTrace{Spec: tc.spec}, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: want 422 naming %s, got %v", tc.name, tc.want, err)
		}
	}
	// A body over the server's limit (1 MiB) is refused before it is decoded.
	big := fmt.Sprintf(`{"apiVersion":"effectivepolicy.dev/v1alpha1","kind":"RequestTrace","spec":{"request":{"host":"a","path":"/%s"}}}`, strings.Repeat("x", 2<<20))
	var code int
	cs.RESTClient().Post().AbsPath(apiPrefix+"/requesttraces").SetHeader("Content-Type", "application/json").Body([]byte(big)).Do(ctx).StatusCode(&code)
	if code != 413 {
		t.Errorf("a 2 MiB body: %d, want 413", code)
	}
	// Nothing is stored: every other verb is refused.
	if _, stderr, err := kubectlRaw(nil, "get", "requesttraces"); err == nil || !strings.Contains(stderr, "405") && !strings.Contains(strings.ToLower(stderr), "not allowed") && !strings.Contains(stderr, "MethodNotAllowed") && !strings.Contains(stderr, "could not find") && !strings.Contains(stderr, "does not allow") {
		t.Errorf("kubectl get requesttraces: err %v, stderr %s", err, stderr)
	}
}

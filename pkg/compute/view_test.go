package compute

import (
	"errors"
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// TestGatewayClassUpdateThenDelete: a GatewayClass whose spec changed is
// still one object; deleting it leaves nothing for a policy to reach (the
// class was counted once per update before).
func TestGatewayClassUpdateThenDelete(t *testing.T) {
	e := engineWith(t, baseTopology, `
apiVersion: example.com/v1
kind: ClusterRetryPolicy
metadata: {name: all}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: GatewayClass, name: gc}]
  retries: 1
`)
	if _, ok := e.Compute(Key{Name: "gc"}); !ok {
		t.Fatal("no output for the GatewayClass")
	}
	gc := parseDocs(t, "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: gc}\nspec: {controllerName: example.com/other}\n")[0]
	e.Upsert(gc)
	var controller string
	e.View(func(v View) { controller = v.Gateways("appns", "gw")[0].ControllerName })
	if controller != "example.com/other" {
		t.Errorf("controllerName %q after the update", controller)
	}
	e.Delete(gc.GroupVersionKind().GroupKind(), "", "gc")
	if _, ok := e.Compute(Key{Name: "gc"}); ok {
		t.Error("the deleted GatewayClass still has an output")
	}
}

// TestViewPaths: the view's listeners carry the path from the root, the
// routes attached through each, and Vias names exactly the attachment
// points of a path (the same via the outputs carry).
func TestViewPaths(t *testing.T) {
	e := engineWith(t, baseTopology, `
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: gw, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: http}]
  retries: 1
---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: main, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: rt, sectionName: main}]
  retries: 2
`)
	e.View(func(v View) {
		gws := v.Gateways("", "")
		if len(gws) != 1 || len(gws[0].Listeners) != 2 {
			t.Fatalf("gateways %+v", gws)
		}
		l := gws[0].Listeners[0]
		routes, attached := v.Routes(l, nil)
		if l.Name != "http" || l.Port != 80 || attached != 1 || len(routes) != 1 || routes[0].Ref.Name != "rt" {
			t.Fatalf("listener %+v, routes %+v", l, routes)
		}
		if got := routes[0].RuleSections; len(got) != 2 || got[0] != "main" || got[1] != "rule-2" {
			t.Errorf("rule sections %v", got)
		}
		spec, err := routes[0].Spec()
		if rules, _ := spec["rules"].([]interface{}); err != nil || len(rules) != 2 {
			t.Errorf("the route's spec %v, %v", spec, err)
		}
		if kept, attached := v.Routes(l, func([]string) bool { return false }); len(kept) != 0 || attached != 1 {
			t.Errorf("a filter keeping nothing: %d kept of %d", len(kept), attached)
		}
		if len(l.Path) != 3 || l.Path[0].Kind != "GatewayClass" || l.Path[2].SectionName != "http" {
			t.Errorf("path %+v", l.Path)
		}
		route := routes[0].Ref
		rule := route
		rule.SectionName = "main"
		path := append(append([]v1alpha1.ObjectReference{}, l.Path...), route, rule)
		vias := v.Vias(path)
		if len(vias) != 1 || vias[0].Kind != "RetryPolicy" || len(vias[0].Via) != 2 || vias[0].Via[0] != l.Path[2] || vias[0].Via[1] != rule {
			t.Errorf("vias on the http listener %+v", vias)
		}
		// The https listener bears nothing: only the rule.
		path[2] = gws[0].Listeners[1].Path[2]
		if vias := v.Vias(path); len(vias) != 1 || len(vias[0].Via) != 1 || vias[0].Via[0] != rule {
			t.Errorf("vias on the https listener %+v", vias)
		}
		if name, ok := v.ServicePort("appns", "svc", 80); !ok || name != "http" {
			t.Errorf("ServicePort svc:80 = %q, %v", name, ok)
		}
		if _, ok := v.ServicePort("appns", "nope", 80); ok {
			t.Error("ServicePort of a missing Service")
		}
		if !v.BackendAllowed(route, v1alpha1.ObjectReference{Kind: "Service", Namespace: "appns", Name: "svc"}) ||
			v.BackendAllowed(route, v1alpha1.ObjectReference{Kind: "Service", Namespace: "other", Name: "svc"}) {
			t.Error("BackendAllowed: same namespace yes, another without a grant no")
		}
	})
}

// TestViewRefused: routes that name the Gateway but attach through none of
// its listeners, each with the reason Gateway API gives.
func TestViewRefused(t *testing.T) {
	e := engineWith(t, baseTopology+`
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: other-ns, namespace: other}
spec: {parentRefs: [{name: gw, namespace: appns}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: no-section, namespace: appns}
spec: {parentRefs: [{name: gw, sectionName: grpc}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {name: tcp, namespace: appns}
spec: {parentRefs: [{name: gw, sectionName: http}]}
`, "")
	var got []ViewRefused
	e.View(func(v View) { got = v.Refused(v.Gateways("appns", "gw")[0], nil) })
	want := map[string]string{
		"no-section": "its parentRef names no listener grpc of Gateway appns/gw",
		"other-ns":   "listener http admits routes of namespace appns only",
		"tcp":        "listener http (HTTP) does not take a TCPRoute",
	}
	if len(got) != len(want) {
		t.Fatalf("refused %+v", got)
	}
	for _, r := range got {
		if want[r.Ref.Name] != r.Why {
			t.Errorf("%s: %q, want %q", r.Ref.Name, r.Why, want[r.Ref.Name])
		}
	}
}

// TestViewRouteSpecUndecodable: a stored spec that does not decode (an
// engine bug, simulated here) is an error to the reader, not an empty route.
func TestViewRouteSpecUndecodable(t *testing.T) {
	e := engineWith(t, baseTopology, "")
	id := topology.NodeID{Group: topology.GatewayGroup, Kind: "HTTPRoute", Namespace: "appns", Name: "rt"}
	if _, ok := e.st.specs[id]; !ok {
		t.Fatalf("no stored spec for %v", id)
	}
	e.st.specs[id] = storedSpec{enc: []byte{'l'}}
	e.View(func(v View) {
		routes, _ := v.Routes(v.Gateways("appns", "gw")[0].Listeners[0], nil)
		if len(routes) != 1 {
			t.Fatalf("routes %+v", routes)
		}
		if spec, err := routes[0].Spec(); !errors.Is(err, errSpecEncoding) {
			t.Errorf("want errSpecEncoding, got %v, %v", spec, err)
		}
	})
}

package compute

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/jsontest"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// meshServices has Service frontend with ports http, grpc and an unnamed one, and a backend
// Service be-v1, in namespace mesh; routes may also live in namespace client.
const meshServices = `
apiVersion: v1
kind: Namespace
metadata: {name: mesh}
---
apiVersion: v1
kind: Namespace
metadata: {name: client}
---
apiVersion: v1
kind: Service
metadata: {name: frontend, namespace: mesh}
spec:
  ports: [{name: http, port: 8080}, {name: grpc, port: 9090}, {port: 7070}]
---
apiVersion: v1
kind: Service
metadata: {name: be-v1, namespace: mesh}
`

// meshPolicies: svcp sets a and b on the Service, portp a on its port http, rtp b on the route
// (in namespace ROUTENS, replaced by the route's), all merged: the route's effective spec says
// which of them reach it and which is more specific.
const meshPolicies = `
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: svcp, namespace: mesh}
spec:
  targetRefs: [{group: "", kind: Service, name: frontend}]
  defaults: {strategy: merge, a: svc, b: svc}
---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: portp, namespace: mesh}
spec:
  targetRefs: [{group: "", kind: Service, name: frontend, sectionName: http}]
  defaults: {strategy: merge, a: port}
---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: rtp, namespace: ROUTENS}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: rt}]
  defaults: {strategy: merge, b: rt}
`

// meshRoute is a route rt of kind in namespace ns with parentRef, whose rule main sends to
// frontend and be-v1.
func meshRoute(kind, ns, parentRef string) string {
	return `---
apiVersion: gateway.networking.k8s.io/v1
kind: ` + kind + `
metadata: {name: rt, namespace: ` + ns + `}
spec:
  parentRefs: [` + parentRef + `]
  rules:
  - name: main
    backendRefs: [{name: frontend, namespace: mesh, port: 8080}, {name: be-v1, namespace: mesh, port: 80}]
`
}

// TestMeshRoutes: a route whose parentRef names a Service (group "", kind
// Service: GAMMA) hangs under the Service, or under the port the parentRef
// selects by port number or by sectionName, the port's name (Gateway API v1.6
// apis/v1/shared_types.go ParentReference: "Service: Port name" and "port ...
// When both Port and SectionName are specified, the name and port of the
// selected listener must match both specified values"). Policies on the
// Service and the port flow to the route, its rules and backends, at the
// levels of a Gateway and a listener: the route's own policy is more specific.
func TestMeshRoutes(t *testing.T) {
	const (
		viaSvc      = "[Service/frontend HTTPRoute/rt]"
		viaPort     = "[Service/frontend Service/frontend#http HTTPRoute/rt]"
		viaNone     = "[HTTPRoute/rt]"
		frontRoot   = "[Service/frontend]"
		frontUnder  = "[HTTPRoute/rt Service/frontend]" // hangs as a backend under a route attached nowhere
		frontUnderT = "[TCPRoute/rt Service/frontend]"
		specSvc     = `{"a":"svc","b":"rt"}`
		specPort    = `{"a":"port","b":"rt"}`
		specNone    = `{"b":"rt"}`
		meshService = `{group: "", kind: Service, name: frontend`
	)
	for _, tc := range []struct {
		name, kind, ns, parentRef string
		routeVia, routeSpec       string
		frontendVia               string // the Service's own context
	}{
		{"Service", "HTTPRoute", "mesh", meshService + `}`, viaSvc, specSvc, frontRoot},
		{"port by number", "HTTPRoute", "mesh", meshService + `, port: 8080}`, viaPort, specPort, frontRoot},
		{"port by name", "HTTPRoute", "mesh", meshService + `, sectionName: http}`, viaPort, specPort, frontRoot},
		{"name and number of one port", "HTTPRoute", "mesh", meshService + `, sectionName: http, port: 8080}`, viaPort, specPort, frontRoot},
		{"unnamed port: the Service", "HTTPRoute", "mesh", meshService + `, port: 7070}`, viaSvc, specSvc, frontRoot},
		{"GRPCRoute", "GRPCRoute", "mesh", meshService + `, port: 8080}`, "[Service/frontend Service/frontend#http GRPCRoute/rt]", specPort, frontRoot},
		{"consumer route in another namespace", "HTTPRoute", "client", meshService + `, namespace: mesh}`, viaSvc, specSvc, frontRoot},
		// Near misses: no path through the Service.
		{"no such port", "HTTPRoute", "mesh", meshService + `, port: 1234}`, viaNone, specNone, frontRoot},
		{"name and number of two ports", "HTTPRoute", "mesh", meshService + `, sectionName: http, port: 9090}`, viaNone, specNone, frontRoot},
		{"no such Service", "HTTPRoute", "mesh", `{group: "", kind: Service, name: nope}`, viaNone, specNone, frontUnder},
		{"consumer route naming its own namespace", "HTTPRoute", "client", meshService + `}`, viaNone, specNone, frontRoot},
		{"group omitted: a Gateway API kind, not the Service", "HTTPRoute", "mesh", `{kind: Service, name: frontend}`, viaNone, specNone, frontUnder},
		{"a route kind GAMMA does not parent", "TCPRoute", "mesh", meshService + `}`, "", "", frontUnderT},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kind := tc.kind
			p := meshPolicies
			if kind != "HTTPRoute" {
				p = strings.ReplaceAll(p, "kind: HTTPRoute", "kind: "+kind)
			}
			got := world(t, meshServices+meshRoute(kind, tc.ns, tc.parentRef), strings.ReplaceAll(p, "ROUTENS", tc.ns))
			if tc.routeVia != "" {
				e := onlyEffective(t, effAt(t, got, Key{tc.ns, "rt"}, kind, retryK), "")
				if v := viaString(e.Via); v != tc.routeVia {
					t.Errorf("route via %s, want %s", v, tc.routeVia)
				}
				if s := specJSON(t, e); s != tc.routeSpec {
					t.Errorf("route spec %s, want %s", s, tc.routeSpec)
				}
			}
			// be-v1 hangs below the route (a consumer route in another
			// namespace would need a ReferenceGrant to reach it).
			if (tc.routeVia == viaSvc || tc.routeVia == viaPort) && tc.ns == "mesh" {
				b := onlyEffective(t, effAt(t, got, Key{"mesh", "be-v1"}, "Service", retryK), "")
				if v := viaString(b.Via); v != tc.routeVia {
					t.Errorf("backend be-v1 via %s, want %s", v, tc.routeVia)
				}
			}
			// The Service the route hangs under is not also its backend: a
			// path holds an object once.
			vias := viasAt(got, Key{"mesh", "frontend"}, "")
			if len(vias) != 1 || vias[0] != tc.frontendVia {
				t.Errorf("frontend vias %v, want [%s]", vias, tc.frontendVia)
			}
		})
	}
}

// viasAt lists the vias of a target's RetryPolicy entries for one section.
func viasAt(got map[Key]runtime.Object, key Key, section string) []string {
	obj, ok := got[key]
	if !ok {
		return nil
	}
	tp := findTP(obj, "Service", retryG, retryK)
	if tp == nil {
		return nil
	}
	var out []string
	for _, e := range tp.Effective {
		if e.SectionName == section {
			out = append(out, viaString(e.Via))
		}
	}
	return out
}

func specJSON(t *testing.T, e v1alpha1.EffectiveSpec) string {
	t.Helper()
	return jsontest.Canonical(t, e.Spec.Raw)
}

// meshRouteKeysTopology has a Gateway route web with Service frontend as its backend, and a mesh
// route inner attached to frontend's port.
const meshRouteKeysTopology = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gc}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: mesh}
spec:
  gatewayClassName: gc
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: mesh}
spec:
  parentRefs: [{name: gw}]
  rules: [{name: main, backendRefs: [{name: frontend, port: 8080}]}]
---
apiVersion: v1
kind: Service
metadata: {name: frontend, namespace: mesh}
spec: {ports: [{name: http, port: 8080}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: inner, namespace: mesh}
spec:
  parentRefs: [{group: "", kind: Service, name: frontend, port: 8080}]
  rules: [{name: main}]
`

// TestMeshRouteKeys: a mesh route is below its Service only as the top of
// its paths; a policy reaching the Service as some other route's backend
// does not reach the mesh route, and the engine's keys say so as the full
// computation does.
func TestMeshRouteKeys(t *testing.T) {
	const onWeb = `
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: webp, namespace: mesh}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web}]
  defaults: {a: web}
`
	const onFrontendPort = `---
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: portp, namespace: mesh}
spec:
  targetRefs: [{group: "", kind: Service, name: frontend, sectionName: http}]
  defaults: {a: port}
`
	for _, tc := range []struct {
		name, pols string
		inner      bool
	}{
		{"a policy above the Service as a backend", onWeb, false},
		{"a policy on the Service's port", onWeb + onFrontendPort, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := worldObjs(t, meshRouteKeysTopology, tc.pols)
			all, err := ComputeAll(objs, Options{})
			if err != nil {
				t.Fatal(err)
			}
			e, _ := NewEngine(Options{})
			for _, o := range objs {
				e.Upsert(o)
			}
			var keys []Key
			for k := range all {
				keys = append(keys, k)
			}
			slices.SortFunc(keys, func(a, b Key) int { return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name) })
			if got := e.Keys(); !slices.Equal(got, keys) {
				t.Errorf("engine keys %v, ComputeAll %v", got, keys)
			}
			if _, ok := all[Key{"mesh", "inner"}]; ok != tc.inner {
				t.Errorf("mesh route has output: %v, want %v", ok, tc.inner)
			}
		})
	}
}

package compute

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

func u(apiVersion, kind, ns, name string, spec map[string]interface{}) *unstructured.Unstructured {
	md := map[string]interface{}{"name": name}
	if ns != "" {
		md["namespace"] = ns
	}
	o := map[string]interface{}{"apiVersion": apiVersion, "kind": kind, "metadata": md}
	if spec != nil {
		o["spec"] = spec
	}
	return &unstructured.Unstructured{Object: o}
}

func ref(group, kind, name string) map[string]interface{} {
	return map[string]interface{}{"group": group, "kind": kind, "name": name}
}

type genSpec struct {
	namespaces      int
	gatewaysPerNS   int
	routesPerGW     int
	servicesPerNS   int
	policies        int
	withListenerSet bool
}

// genTopology builds a synthetic cluster: per namespace some Gateways, each
// with HTTP listeners; routes spread over the gateways, each with two named
// rules referencing services of its namespace (and one of a shared namespace);
// policies spread over the levels (namespace, gateway, listener, route, rule,
// service, service port) and kinds (inherited RetryPolicy, direct
// TimeoutPolicy).
func genTopology(g genSpec) (topo, pols []*unstructured.Unstructured) {
	topo = append(topo, parseDocsNoT(testCRDs)...)
	topo = append(topo, genShared(g)...)
	route := 0
	for n := 0; n < g.namespaces; n++ {
		var objs []*unstructured.Unstructured
		objs, route = genNamespace(g, n, route)
		topo = append(topo, objs...)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for p := 0; p < g.policies; p++ {
		pols = append(pols, genPolicy(g, p, t0))
	}
	return topo, pols
}

// genShared is the GatewayClass and the namespace shared with its Services, which every
// namespace's routes refer to.
func genShared(g genSpec) []*unstructured.Unstructured {
	var objs []*unstructured.Unstructured
	objs = append(objs, u("gateway.networking.k8s.io/v1", "GatewayClass", "", "gc", map[string]interface{}{"controllerName": "x/y"}))
	objs = append(objs, u("v1", "Namespace", "", "shared", nil))
	for s := 0; s < 10; s++ {
		objs = append(objs, u("v1", "Service", "shared", fmt.Sprintf("common-%d", s), map[string]interface{}{
			"ports": []interface{}{map[string]interface{}{"name": "http", "port": int64(80)}},
		}))
	}
	// Routes reach the shared Services only where a ReferenceGrant allows it: from every
	// namespace but the last.
	var from []interface{}
	for n := 0; n+1 < g.namespaces; n++ {
		from = append(from, map[string]interface{}{"group": topology.GatewayGroup, "kind": "HTTPRoute", "namespace": fmt.Sprintf("ns-%d", n)})
	}
	objs = append(objs, u("gateway.networking.k8s.io/v1beta1", "ReferenceGrant", "shared", "routes", map[string]interface{}{
		"from": from, "to": []interface{}{map[string]interface{}{"group": "", "kind": "Service"}},
	}))
	return objs
}

// genNamespace is namespace ns-n with its Services and Gateways and their routes, numbered from
// route on; it returns the number of the next route too.
func genNamespace(g genSpec, n, route int) ([]*unstructured.Unstructured, int) {
	var objs []*unstructured.Unstructured
	ns := fmt.Sprintf("ns-%d", n)
	nsObj := u("v1", "Namespace", "", ns, nil)
	nsObj.SetLabels(map[string]string{"idx": fmt.Sprint(n % 3)})
	objs = append(objs, nsObj)
	for s := 0; s < g.servicesPerNS; s++ {
		objs = append(objs, u("v1", "Service", ns, fmt.Sprintf("svc-%d", s), map[string]interface{}{
			"ports": []interface{}{map[string]interface{}{"name": "http", "port": int64(80)}, map[string]interface{}{"name": "grpc", "port": int64(90)}},
		}))
	}
	for gi := 0; gi < g.gatewaysPerNS; gi++ {
		gw := fmt.Sprintf("gw-%d", gi)
		objs = append(objs, u("gateway.networking.k8s.io/v1", "Gateway", ns, gw, map[string]interface{}{
			"gatewayClassName": "gc",
			"allowedListeners": map[string]interface{}{"namespaces": map[string]interface{}{"from": "Same"}},
			"listeners": []interface{}{
				map[string]interface{}{"name": "http", "port": int64(80), "protocol": "HTTP"},
				map[string]interface{}{"name": "https", "port": int64(443), "protocol": "HTTPS", "allowedRoutes": map[string]interface{}{"namespaces": map[string]interface{}{"from": "All"}}},
			},
		}))
		if g.withListenerSet {
			objs = append(objs, u("gateway.networking.k8s.io/v1", "ListenerSet", ns, gw+"-ls", map[string]interface{}{
				"parentRef": map[string]interface{}{"name": gw},
				"listeners": []interface{}{map[string]interface{}{"name": "extra", "port": int64(8080), "protocol": "HTTP"}},
			}))
		}
		for r := 0; r < g.routesPerGW; r++ {
			parent := map[string]interface{}{"name": gw}
			if g.withListenerSet && r%5 == 4 {
				parent = map[string]interface{}{"kind": "ListenerSet", "name": gw + "-ls"}
			}
			svc := fmt.Sprintf("svc-%d", (route)%max(1, g.servicesPerNS))
			objs = append(objs, u("gateway.networking.k8s.io/v1", "HTTPRoute", ns, fmt.Sprintf("route-%d", route), map[string]interface{}{
				"parentRefs": []interface{}{parent},
				"rules": []interface{}{
					map[string]interface{}{"name": "main", "backendRefs": []interface{}{map[string]interface{}{"name": svc, "port": int64(80)}}},
					map[string]interface{}{"name": "shared", "backendRefs": []interface{}{map[string]interface{}{"name": fmt.Sprintf("common-%d", route%10), "namespace": "shared"}}},
				},
			}))
			route++
		}
	}
	return objs, route
}

// genPolicy is policy number p: its namespace, level, kind and spec cycle with p; it is created
// p seconds after t0.
func genPolicy(g genSpec, p int, t0 time.Time) *unstructured.Unstructured {
	nsIdx := p % max(1, g.namespaces)
	ns := fmt.Sprintf("ns-%d", nsIdx)
	var target map[string]interface{}
	kind := "RetryPolicy"
	spec := map[string]interface{}{"attempts": int64(p % 7), "listMaps": []interface{}{map[string]interface{}{"name": fmt.Sprint("k", p%3), "v": int64(p)}}}
	routesInNS := g.gatewaysPerNS * g.routesPerGW
	firstRoute := nsIdx * routesInNS
	switch p % 8 {
	case 0:
		target = ref("", "Namespace", ns)
		spec = map[string]interface{}{"overrides": map[string]interface{}{"strategy": "patch", "budget": int64(p)}}
	case 1:
		target = ref("gateway.networking.k8s.io", "Gateway", fmt.Sprintf("gw-%d", (p/8)%max(1, g.gatewaysPerNS)))
	case 2:
		target = ref("gateway.networking.k8s.io", "Gateway", fmt.Sprintf("gw-%d", (p/8)%max(1, g.gatewaysPerNS)))
		target["sectionName"] = "https"
		spec["strategy"] = "patch"
	case 3, 4:
		if routesInNS > 0 {
			target = ref("gateway.networking.k8s.io", "HTTPRoute", fmt.Sprintf("route-%d", firstRoute+(p/8)%routesInNS))
		} else {
			target = ref("", "Namespace", ns)
		}
	case 5:
		if routesInNS > 0 {
			target = ref("gateway.networking.k8s.io", "HTTPRoute", fmt.Sprintf("route-%d", firstRoute+(p/8)%routesInNS))
			target["sectionName"] = "main"
		} else {
			target = ref("", "Namespace", ns)
		}
	case 6:
		target = ref("", "Service", fmt.Sprintf("svc-%d", (p/8)%max(1, g.servicesPerNS)))
		kind = "TimeoutPolicy"
		spec = map[string]interface{}{"timeout": fmt.Sprint(p, "s")}
	case 7:
		target = ref("", "Service", fmt.Sprintf("svc-%d", (p/8)%max(1, g.servicesPerNS)))
		target["sectionName"] = "http"
		spec["defaults"] = map[string]interface{}{"extra": int64(p)}
	}
	spec["targetRefs"] = []interface{}{target}
	po := u("example.com/v1", kind, ns, fmt.Sprintf("pol-%d", p), spec)
	po.SetCreationTimestamp(metav1NewTime(t0.Add(time.Duration(p) * time.Second)))
	return po
}

func parseDocsNoT(s string) []*unstructured.Unstructured {
	return parseDocs(nopTB{}, s)
}

package kuadrant

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/oracles/kuadrant/kuadrantoracle"
)

// kuadrantAttached says whether the route of a Kuadrant path is attached,
// as Gateway API says, to the path's listener: the listener's protocol
// takes the route's kind (HTTP or HTTPS for HTTPRoute and GRPCRoute), its
// allowedRoutes admit the route's namespace, and their hostnames
// intersect. policy-machinery links a route to every listener its
// parentRef selects by Gateway and sectionName alone
// (controller/topology_builder.go), so Kuadrant computes effective
// policies on paths no request can take; the engine follows attachment.
// Such paths are not compared (docs/differential.md).
func kuadrantAttached(objs []*unstructured.Unstructured, path []kuadrantoracle.Node) bool {
	var gw, listener, route kuadrantoracle.Node
	for _, n := range path {
		switch n.Kind {
		case "Gateway":
			gw = n
		case "Listener":
			listener = n
		case "HTTPRoute", "GRPCRoute":
			route = n
		}
	}
	l := findListener(objs, gw, listener.SectionName)
	r := findObject(objs, route.Kind, route.Namespace, route.Name)
	if l == nil || r == nil {
		return false
	}
	if p, _ := l["protocol"].(string); p != "HTTP" && p != "HTTPS" {
		return false
	}
	if from, _, _ := unstructured.NestedString(l, "allowedRoutes", "namespaces", "from"); from == "Same" && route.Namespace != gw.Namespace {
		return false
	}
	lh, _ := l["hostname"].(string)
	hosts, _, _ := unstructured.NestedStringSlice(r.Object, "spec", "hostnames")
	if lh == "" || len(hosts) == 0 {
		return true
	}
	for _, h := range hosts {
		if hostsIntersect(lh, h) {
			return true
		}
	}
	return false
}

// hostsIntersect: equal names, or a wildcard ("*." then a suffix) of one
// covering the other with at least one more label (Gateway API
// Listener.hostname and HTTPRoute.hostnames).
func hostsIntersect(a, b string) bool {
	if a == b {
		return true
	}
	covers := func(w, h string) bool {
		return strings.HasPrefix(w, "*.") && strings.HasSuffix(h, w[1:]) && len(h) > len(w)-1
	}
	return covers(a, b) || covers(b, a)
}

func findListener(objs []*unstructured.Unstructured, gw kuadrantoracle.Node, name string) map[string]any {
	g := findObject(objs, "Gateway", gw.Namespace, gw.Name)
	if g == nil {
		return nil
	}
	ls, _, _ := unstructured.NestedSlice(g.Object, "spec", "listeners")
	for _, l := range ls {
		if m, ok := l.(map[string]any); ok && m["name"] == name {
			return m
		}
	}
	return nil
}

func findObject(objs []*unstructured.Unstructured, kind, ns, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetNamespace() == ns && o.GetName() == name {
			return o
		}
	}
	return nil
}

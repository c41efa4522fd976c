package envoygateway

import (
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
)

// The settings of TCP, TLS and UDP routes sit on the IR's route itself
// (ir.TCPRoute, ir.UDPRoute), and Envoy Gateway applies only part of each
// policy to them (a UDP route takes the load balancer, a TCP route the
// TCP settings and authorization, no route of these kinds an
// EnvoyExtensionPolicy). Every compared field is checked on them too, so
// that a field we report and Envoy Gateway leaves out is a disagreement.

// egL4Checks compares every TCP and TLS route (the IR's tcp listeners) and
// UDP route (udp listeners) through each listener.
func egL4Checks(objs []*unstructured.Unstructured, ours *differential.Ours, o *egOutput) ([]differential.Check, error) {
	var checks []differential.Check
	for _, key := range slices.Sorted(maps.Keys(o.XdsIR)) {
		x := o.XdsIR[key]
		for _, l := range x.TCP {
			for _, r := range l.Routes {
				cs, err := l4RouteChecks(objs, ours, l.Metadata, r)
				if err != nil {
					return nil, err
				}
				checks = append(checks, cs...)
			}
		}
		for _, l := range x.UDP {
			if l.Route == nil {
				continue
			}
			cs, err := l4RouteChecks(objs, ours, l.Metadata, l.Route)
			if err != nil {
				return nil, err
			}
			checks = append(checks, cs...)
		}
	}
	return checks, nil
}

// l4RouteChecks reads one IR route: its settings are fields of the route
// itself (loadBalancer, timeout, authorization).
func l4RouteChecks(objs []*unstructured.Unstructured, ours *differential.Ours, l egMeta, r map[string]any) ([]differential.Check, error) {
	meta, _ := r["metadata"].(map[string]any)
	kind, _ := meta["kind"].(string)
	name, _ := meta["name"].(string)
	ns, _ := meta["namespace"].(string)
	if l.Kind != "Gateway" || kind == "" || !strings.HasSuffix(kind, "Route") {
		return nil, nil
	}
	rc := routeContext{gwNS: l.Namespace, gw: l.Name, listener: l.SectionName, kind: kind, ns: ns, name: name}
	view := egRoute{Traffic: map[string]any{"loadBalancer": r["loadBalancer"], "timeout": r["timeout"]}}
	if a, ok := r["authorization"]; ok {
		view.Security = map[string]any{"authorization": a}
	}
	return fieldChecks(objs, ours, rc, view, egRouteFields)
}

package trace

// Picking what is traced: the Gateway the most HTTPRoutes name and the
// first of its routes a trace matches.

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/measure"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/report"
)

var httpRouteGVR = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}

// routeForTrace is what picking the traced Gateway and route reads of an
// HTTPRoute.
type routeForTrace struct {
	Metadata struct{ Namespace, Name string } `json:"metadata"`
	Spec     struct {
		ParentRefs []struct {
			Group     *string `json:"group"`
			Kind      *string `json:"kind"`
			Namespace string  `json:"namespace"`
			Name      string  `json:"name"`
		} `json:"parentRefs"`
		Hostnames []string `json:"hostnames"`
		Rules     []struct {
			Matches []struct {
				Path *struct {
					Value string `json:"value"`
				} `json:"path"`
			} `json:"matches"`
		} `json:"rules"`
	} `json:"spec"`
}

// hostAndPath: the route's first hostname and its first rule's first path.
func (r *routeForTrace) hostAndPath() (string, string, bool) {
	s := r.Spec
	if len(s.Hostnames) == 0 || len(s.Rules) == 0 || len(s.Rules[0].Matches) == 0 || s.Rules[0].Matches[0].Path == nil {
		return "", "", false
	}
	return s.Hostnames[0], s.Rules[0].Matches[0].Path.Value, s.Rules[0].Matches[0].Path.Value != ""
}

// gatewaysOf returns the namespace/name of the Gateways r names (distinct).
func (r *routeForTrace) gatewaysOf() []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range r.Spec.ParentRefs {
		if p.Group != nil && *p.Group != "gateway.networking.k8s.io" || p.Kind != nil && *p.Kind != "Gateway" {
			continue
		}
		ns := p.Namespace
		if ns == "" {
			ns = r.Metadata.Namespace
		}
		if k := ns + "/" + p.Name; !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// pickTraceGateway returns the Gateway the most HTTPRoutes name (ties: the
// first by namespace/name) and those routes, sorted by namespace/name.
// parentRefs stand in for attachment here: a parentRef whose listener does
// not take the route (a hostname that does not intersect) still counts.
func pickTraceGateway(ctx context.Context, rc rest.Interface) (string, []*routeForTrace, error) {
	body, err := rc.Get().AbsPath(measure.RoutePath).SetHeader("Accept", "application/json").DoRaw(ctx)
	if err != nil {
		return "", nil, err
	}
	var list struct {
		Items []*routeForTrace `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return "", nil, err
	}
	byGW := map[string][]*routeForTrace{}
	for _, r := range list.Items {
		for _, gw := range r.gatewaysOf() {
			byGW[gw] = append(byGW[gw], r)
		}
	}
	best := ""
	for gw, rs := range byGW {
		if best == "" || len(rs) > len(byGW[best]) || len(rs) == len(byGW[best]) && gw < best {
			best = gw
		}
	}
	if best == "" {
		return "", nil, fmt.Errorf("no HTTPRoute names a Gateway")
	}
	routes := byGW[best]
	sort.Slice(routes, func(i, j int) bool {
		a, b := routes[i].Metadata, routes[j].Metadata
		return a.Namespace < b.Namespace || a.Namespace == b.Namespace && a.Name < b.Name
	})
	return best, routes, nil
}

// pickRoute sets the request to the first of routes (sorted by
// namespace/name) that a trace of its first hostname and first path
// matches: a route naming only a listener whose hostname it does not share
// is not served, and a trace that stops early would measure less work.
func (t *tracer) pickRoute(ctx context.Context, routes []*routeForTrace, r *report.TraceResult) error {
	for _, rt := range routes {
		host, path, ok := rt.hostAndPath()
		if !ok {
			continue
		}
		t.host, t.path = host, path
		out, err := t.traces.Create(ctx, t.spec(true, false), metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("RequestTrace: %w", err)
		}
		if port, ok := matched(out.Status, rt.Metadata.Namespace, rt.Metadata.Name); ok {
			t.routeNS, t.route, t.port = rt.Metadata.Namespace, rt.Metadata.Name, port
			r.Route, r.Host, r.Path, r.Port = t.routeNS+"/"+t.route, host, path, port
			r.Matches = len(out.Status.Matches)
			raw, _ := json.Marshal(out)
			r.ResponseBytes = len(raw)
			onPort, err := t.traces.Create(ctx, t.spec(true, true), metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("RequestTrace on port %d: %w", port, err)
			}
			if _, ok := matched(onPort.Status, t.routeNS, t.route); !ok {
				return fmt.Errorf("the trace on port %d does not match route %s", port, r.Route)
			}
			r.PortMatches = len(onPort.Status.Matches)
			raw, _ = json.Marshal(onPort)
			r.PortResponseBytes = len(raw)
			return nil
		}
	}
	return fmt.Errorf("no route of Gateway %s/%s is matched by a trace of its hostname and first path", t.gwNS, t.gwName)
}

package scale

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/live"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/registry"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/requestmatch"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/benchkit"
)

// BenchmarkRequestTrace: a RequestTrace (docs/spec.md §9) through the REST storage
// (TraceREST.Create: validation, the live layer's topology, the effective
// policies read from the served outputs; no HTTP, no encoding) against the
// Gateway with the most attached routes of the topology at -scale, next to
// its baseline measured in the same process: the REST Get of the traced
// route's EffectivePolicy. The in-process goal is a trace under
// 50 ms at scale 1 (~300 routes per Gateway). Sub-benchmarks:
//
//   - get-effectivepolicy: the baseline;
//   - gateway: spec.gateway names the Gateway (ratio to the baseline in
//     x-get);
//   - all-gateways: spec.gateway unset, every Gateway is traced.
//
// Scale 1 needs ~2 GB of RAM and a minute or two to start the live layer;
// -scale=0.05 runs in seconds. -profile-dir writes CPU profiles of the
// traces (trace-gateway.prof, trace-all-gateways.prof):
//
//	go test -run '^$' -bench '^BenchmarkRequestTrace$' -benchtime 20x ./test/scale -args -scale=1
//	go test -run '^$' -bench '^BenchmarkRequestTrace$' -benchtime 20x ./test/scale -args -scale=0.05
func BenchmarkRequestTrace(b *testing.B) {
	defer quietKlog()()
	client := fakeClient(b, Generate(Options{Scale: *scaleFlag, Seed: *seedFlag, GatewayAPICRDs: true}))
	s := startLive(b, client, b.TempDir())
	defer s.stop()

	target, err := pickTraceTarget(s.l)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("Gateway %s/%s: %d routes (%d listener attachments); tracing %s %s (route %s/%s on listener %s)",
		target.gwNS, target.gwName, target.routes, target.attachments, target.host, target.path, target.routeNS, target.routeName, target.listener)

	// A user in the context, as the API machinery sets one; with no
	// Access (nil), nothing is hidden from her.
	ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "bench", Groups: []string{user.AllAuthenticated}})
	traces := registry.NewTraceREST(s.l.Answers(), s.l.EffectivePolicies(), nil, nil)
	eps := registry.NewEffectivePolicyREST(s.l.EffectivePolicies())
	request := v1alpha1.TracedRequest{Host: target.host, Path: target.path}
	named := &v1alpha1.RequestTrace{Spec: v1alpha1.RequestTraceSpec{
		Gateway: &v1alpha1.GatewayReference{Namespace: target.gwNS, Name: target.gwName}, Request: request,
	}}
	every := &v1alpha1.RequestTrace{Spec: v1alpha1.RequestTraceSpec{Request: request}}

	// The trace must find the route, or it measures a trace that stops
	// early (no listener, no rule) and says nothing about the goal.
	var port int32
	for _, in := range []*v1alpha1.RequestTrace{named, every} {
		if port, err = checkMatched(ctx, traces, in, target); err != nil {
			b.Fatal(err)
		}
	}
	// The same trace on the port the request arrives on (one match).
	onPort := named.DeepCopy()
	onPort.Spec.Port = port

	getNs := benchGetEffectivePolicy(ctx, b, eps, target)
	benchTrace(ctx, b, traces, "gateway", named, getNs, target)
	benchTrace(ctx, b, traces, "gateway-port", onPort, getNs, target)
	benchTrace(ctx, b, traces, "all-gateways", every, getNs, target)
}

// benchGetEffectivePolicy runs the baseline, the REST Get of the target
// route's EffectivePolicy, and returns its ns/op, for the traces' ratio to it
// (0 when -bench left the baseline out).
func benchGetEffectivePolicy(ctx context.Context, b *testing.B, eps *registry.REST, target traceTarget) float64 {
	var getNs float64
	b.Run("get-effectivepolicy", func(b *testing.B) {
		gctx := genericapirequest.WithNamespace(ctx, target.routeNS)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := eps.Get(gctx, target.routeName, &metav1.GetOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		getNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(getNs/1e6, "ms/op")
	})
	return getNs
}

// benchTrace runs the sub-benchmark name: the trace in through the REST
// storage, with its ratio to the baseline's getNs when there is one.
func benchTrace(ctx context.Context, b *testing.B, traces *registry.TraceREST, name string, in *v1alpha1.RequestTrace, getNs float64, target traceTarget) {
	b.Run(name, func(b *testing.B) {
		b.ReportAllocs()
		stop := profile(b, "trace-"+name+".prof")
		b.ResetTimer()
		// CPU time (all threads, garbage collection included) is what
		// runs on a shared machine can be compared by.
		cpu0 := benchkit.CPUTime()
		var out kruntime.Object
		for i := 0; i < b.N; i++ {
			var err error
			if out, err = traces.Create(ctx, in.DeepCopy(), nil, &metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		cpu := benchkit.CPUTime() - cpu0
		stop()
		raw, _ := json.Marshal(out)
		size := len(raw)
		ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(ns/1e6, "ms/op")
		b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms/op")
		if getNs > 0 {
			b.ReportMetric(ns/getNs, "x-get")
		}
		b.ReportMetric(float64(target.routes), "routes/gateway")
		b.ReportMetric(float64(size)/1e3, "resp-KB")
	})
}

// traceTarget is the Gateway a benchmark traces through and a request one
// of its routes serves.
type traceTarget struct {
	gwNS, gwName        string
	routes, attachments int // distinct routes; route-listener pairs
	routeNS, routeName  string
	host, path          string
	listener            string // the listener the route was picked on
}

// pickTraceTarget picks the Gateway with the most distinct attached routes
// (ties: the first by namespace and name, as View sorts them), and a request
// for the first HTTPRoute attached to its first listener that has a
// hostname: the route's hostname and its first rule's path.
func pickTraceTarget(l *live.Live) (traceTarget, error) {
	topo, err := l.Answers().TraceTopology(context.Background())
	if err != nil {
		return traceTarget{}, err
	}
	var t traceTarget
	var pickErr error
	topo.View(func(v compute.View) {
		var best *compute.ViewGateway
		gws := v.Gateways("", "")
		for i := range gws {
			n, pairs := countRoutes(v, &gws[i])
			if n > t.routes {
				best, t.routes, t.attachments = &gws[i], n, pairs
			}
		}
		if best == nil {
			pickErr = fmt.Errorf("no Gateway with attached routes")
			return
		}
		t.gwNS, t.gwName = best.Namespace, best.Name
		for _, vl := range best.Listeners {
			if vl.Hostname == "" {
				continue
			}
			routes, _ := v.Routes(vl, nil)
			for _, vr := range routes {
				if vr.Ref.Kind != "HTTPRoute" {
					continue
				}
				spec, err := vr.Spec()
				if err != nil {
					pickErr = err
					return
				}
				host, path, ok := hostAndPath(spec)
				if !ok {
					continue
				}
				t.routeNS, t.routeName, t.host, t.path = vr.Ref.Namespace, vr.Ref.Name, host, path
				t.listener = vl.Name
				return
			}
		}
		pickErr = fmt.Errorf("Gateway %s/%s: no HTTPRoute with a hostname and a path match", best.Namespace, best.Name)
	})
	return t, pickErr
}

// countRoutes returns the distinct routes attached to gw and the number of
// (listener, route) attachments.
func countRoutes(v compute.View, gw *compute.ViewGateway) (distinct, pairs int) {
	seen := map[v1alpha1.ObjectReference]bool{}
	for _, vl := range gw.Listeners {
		routes, _ := v.Routes(vl, nil)
		for _, vr := range routes {
			seen[vr.Ref] = true
			pairs++
		}
	}
	return len(seen), pairs
}

// hostAndPath reads a route's first hostname and the value of its first
// rule's first path match (the generator's rules are PathPrefix /r<n>/<rule>).
func hostAndPath(spec map[string]interface{}) (host, path string, ok bool) {
	hosts, _ := spec["hostnames"].([]interface{})
	rules, _ := spec["rules"].([]interface{})
	if len(hosts) == 0 || len(rules) == 0 {
		return "", "", false
	}
	host, _ = hosts[0].(string)
	rule, _ := rules[0].(map[string]interface{})
	matches, _ := rule["matches"].([]interface{})
	if len(matches) == 0 {
		return "", "", false
	}
	m, _ := matches[0].(map[string]interface{})
	p, _ := m["path"].(map[string]interface{})
	path, _ = p["value"].(string)
	return host, path, host != "" && path != ""
}

// checkMatched traces in once and requires a match of reason Matched on
// the target's route.
// It returns the port of the listener the route matched on.
func checkMatched(ctx context.Context, traces *registry.TraceREST, in *v1alpha1.RequestTrace, t traceTarget) (int32, error) {
	out, err := traces.Create(ctx, in.DeepCopy(), nil, &metav1.CreateOptions{})
	if err != nil {
		return 0, err
	}
	st := out.(*v1alpha1.RequestTrace).Status
	for _, m := range st.Matches {
		if m.Reason == string(requestmatch.ReasonMatched) && m.Route != nil && m.Route.Namespace == t.routeNS && m.Route.Name == t.routeName {
			return m.Port, nil
		}
	}
	raw, _ := json.Marshal(st)
	return 0, fmt.Errorf("trace of %s%s (gateway %v) did not match route %s/%s: %s", t.host, t.path, in.Spec.Gateway != nil, t.routeNS, t.routeName, raw)
}

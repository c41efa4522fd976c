// Package trace times a RequestTrace through kube-apiserver against a GET
// of the traced HTTPRoute: the Gateway the most routes name, a route the
// trace matches, the trace on every port and on the matched one, of every
// Gateway, and as users run it with kubectl.
package trace

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned"
	epv1alpha1 "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned/typed/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/requestmatch"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/measure"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/procfs"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/report"
)

// Measure times a RequestTrace create through kube-apiserver with the
// generated clientset against GETs of the traced HTTPRoute with the
// dynamic client (both JSON, both decoded, the same rest config),
// interleaved, reps times each after 3 unmeasured ones; then a trace of
// every Gateway and the kubectl commands.
func Measure(ctx context.Context, cfg *rest.Config, rc rest.Interface, dc dynamic.Interface, kubeconfig, pluginDir string, reps, pid int) (report.TraceResult, error) {
	var r report.TraceResult
	cs, err := versioned.NewForConfig(cfg)
	if err != nil {
		return r, err
	}
	gw, routes, err := pickTraceGateway(ctx, rc)
	if err != nil {
		return r, err
	}
	t := &tracer{traces: cs.EffectivepolicyV1alpha1().RequestTraces(), pid: pid}
	t.gwNS, t.gwName = splitKey(gw)
	r.Gateway, r.RoutesNamingIt, r.Reps = gw, len(routes), reps
	if err := t.pickRoute(ctx, routes, &r); err != nil {
		return r, err
	}
	measure.Logf("RequestTrace: Gateway %s (%d HTTPRoutes name it), %s%s (route %s), %d repetitions against GET httproute %s",
		gw, r.RoutesNamingIt, r.Host, r.Path, r.Route, reps, r.Route)
	get := func() (time.Duration, error) {
		t0 := time.Now()
		_, err := dc.Resource(httpRouteGVR).Namespace(t.routeNS).Get(ctx, t.route, metav1.GetOptions{})
		return time.Since(t0), err
	}
	var cpu0 float64
	for i := 0; i < 3+reps; i++ {
		if i == 3 {
			cpu0, _ = procfs.CPUSeconds(pid)
		}
		dt, err := t.trace(ctx, true, false)
		if err != nil {
			return r, fmt.Errorf("RequestTrace: %w", err)
		}
		dp, err := t.trace(ctx, true, true)
		if err != nil {
			return r, fmt.Errorf("RequestTrace on port %d: %w", t.port, err)
		}
		dg, err := get()
		if err != nil {
			return r, fmt.Errorf("GET httproute %s: %w", r.Route, err)
		}
		if i >= 3 {
			r.TraceMs, r.PortTraceMs, r.GetMs = append(r.TraceMs, msOf(dt)), append(r.PortTraceMs, msOf(dp)), append(r.GetMs, msOf(dg))
		}
	}
	cpu1, _ := procfs.CPUSeconds(pid)
	// Both traces ran per repetition; the server's CPU is shared between
	// them in proportion to nothing measurable, so it is given per pair.
	r.ServerCPUMsPerTrace = (cpu1 - cpu0) * 1000 / float64(reps)
	r.TraceP50, r.TraceP90 = measure.PercentileMs(r.TraceMs, 0.5), measure.PercentileMs(r.TraceMs, 0.9)
	r.PortTraceP50, r.PortTraceP90 = measure.PercentileMs(r.PortTraceMs, 0.5), measure.PercentileMs(r.PortTraceMs, 0.9)
	r.GetP50, r.GetP90 = measure.PercentileMs(r.GetMs, 0.5), measure.PercentileMs(r.GetMs, 0.9)
	r.RatioP50, r.RatioP90 = r.TraceP50/r.GetP50, r.TraceP90/r.GetP90
	r.PortRatioP50, r.PortRatioP90 = r.PortTraceP50/r.GetP50, r.PortTraceP90/r.GetP90
	measure.Logf("  trace p50 %.1f ms p90 %.1f ms; on port %d p50 %.1f ms p90 %.1f ms (server CPU %.1f ms per pair); GET httproute p50 %.1f ms p90 %.1f ms; ratio %.2f× / %.2f×, on the port %.2f× / %.2f×",
		r.TraceP50, r.TraceP90, t.port, r.PortTraceP50, r.PortTraceP90, r.ServerCPUMsPerTrace, r.GetP50, r.GetP90, r.RatioP50, r.RatioP90, r.PortRatioP50, r.PortRatioP90)

	if err := t.everyGateway(ctx, &r); err != nil {
		return r, err
	}
	if err := kubectlTrace(ctx, kubeconfig, pluginDir, t.spec(true, false), t.routeNS, t.route, kubectlReps, &r); err != nil {
		return r, err
	}
	measure.Logf("  kubectl get httproute -o yaml %.0f ms; kubectl create -f trace.yaml -o yaml %.0f ms (%.2f×), with --validate=false %.0f ms; kubectl effectivepolicy trace %.0f ms (medians of %d)",
		r.KubectlGetMs, r.KubectlCreateMs, r.KubectlRatio, r.KubectlCreateNoValidateMs, r.KubectlPluginMs, r.KubectlReps)
	return r, nil
}

// tracer traces one request through kube-apiserver and reads the
// server's CPU time around it.
type tracer struct {
	traces         epv1alpha1.RequestTraceInterface
	pid            int
	gwNS, gwName   string
	host, path     string
	port           int32 // the matched listener's
	routeNS, route string
}

// spec is the traced request, through the Gateway (named) or every Gateway,
// on the matched listener's port (onPort) or every port.
func (t *tracer) spec(named, onPort bool) *v1alpha1.RequestTrace {
	in := &v1alpha1.RequestTrace{Spec: v1alpha1.RequestTraceSpec{Request: v1alpha1.TracedRequest{Host: t.host, Path: t.path}}}
	if named {
		in.Spec.Gateway = &v1alpha1.GatewayReference{Namespace: t.gwNS, Name: t.gwName}
	}
	if onPort {
		in.Spec.Port = t.port
	}
	return in
}

func (t *tracer) trace(ctx context.Context, named, onPort bool) (time.Duration, error) {
	t0 := time.Now()
	_, err := t.traces.Create(ctx, t.spec(named, onPort), metav1.CreateOptions{})
	return time.Since(t0), err
}

// everyGateway times the trace with spec.gateway unset, the second of two
// runs, with the server's CPU time over both and its peak RSS afterwards.
func (t *tracer) everyGateway(ctx context.Context, r *report.TraceResult) error {
	cpu0, _ := procfs.CPUSeconds(t.pid)
	for i := 0; i < 2; i++ {
		d, err := t.trace(ctx, false, false)
		if err != nil {
			return fmt.Errorf("RequestTrace of every Gateway: %w", err)
		}
		r.AllGatewaysMs = msOf(d)
	}
	cpu1, _ := procfs.CPUSeconds(t.pid)
	r.AllGatewaysServerCPUMs = (cpu1 - cpu0) * 1000 / 2
	if st, err := procfs.StatusKB(t.pid); err == nil {
		r.ServerPeakRSSBytes = st["VmHWM"] << 10
	}
	measure.Logf("  trace of every Gateway: %.0f ms (server CPU %.0f ms per trace); server peak RSS now %d MiB",
		r.AllGatewaysMs, r.AllGatewaysServerCPUMs, r.ServerPeakRSSBytes>>20)
	return nil
}

// matched reports whether s matches the request to route ns/name, and on
// which listener port (the first such match).
func matched(s v1alpha1.RequestTraceStatus, ns, name string) (int32, bool) {
	for _, m := range s.Matches {
		if m.Reason == string(requestmatch.ReasonMatched) && m.Route != nil && m.Route.Namespace == ns && m.Route.Name == name {
			return m.Port, true
		}
	}
	return 0, false
}

func splitKey(k string) (string, string) {
	ns, name, _ := strings.Cut(k, "/")
	return ns, name
}

func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

package main

// RequestTrace through kube-apiserver (issue: a trace against the Gateway
// with the most routes answers within 2× of `kubectl get httproute`).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned"
	epv1alpha1 "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned/typed/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/requestmatch"
)

// traceResult is a RequestTrace against the Gateway that the most
// HTTPRoutes name in their parentRefs, timed against a GET of the traced
// route, interleaved, with the same client configuration.
type traceResult struct {
	Gateway string `json:"gateway"`
	// RoutesNamingIt: distinct HTTPRoutes with a parentRef to the Gateway.
	RoutesNamingIt int    `json:"routesNamingIt"`
	Route          string `json:"route"`
	Host           string `json:"host"`
	Path           string `json:"path"`
	// Matches: the trace's matches (one per listener taking the host);
	// ResponseBytes: its answer as JSON.
	Matches       int       `json:"matches"`
	ResponseBytes int       `json:"responseBytes"`
	Reps          int       `json:"reps"`
	TraceMs       []float64 `json:"traceMs"`
	GetMs         []float64 `json:"getHTTPRouteMs"`
	TraceP50      float64   `json:"traceP50Ms"`
	TraceP90      float64   `json:"traceP90Ms"`
	GetP50        float64   `json:"getHTTPRouteP50Ms"`
	GetP90        float64   `json:"getHTTPRouteP90Ms"`
	// RatioP50, RatioP90: trace ÷ GET at each percentile.
	RatioP50 float64 `json:"ratioP50"`
	RatioP90 float64 `json:"ratioP90"`
	// Port: the port of the listener the route is matched on; the same
	// trace limited to it (spec.port set, one match) is timed in the same
	// loop, interleaved: a request arrives on one port, and a trace of every
	// port answers once per listener taking the host.
	Port              int32     `json:"port"`
	PortMatches       int       `json:"portMatches"`
	PortResponseBytes int       `json:"portResponseBytes"`
	PortTraceMs       []float64 `json:"portTraceMs"`
	PortTraceP50      float64   `json:"portTraceP50Ms"`
	PortTraceP90      float64   `json:"portTraceP90Ms"`
	PortRatioP50      float64   `json:"portRatioP50"`
	PortRatioP90      float64   `json:"portRatioP90"`
	// ServerCPUMsPerTrace: the server process's CPU time (user + system)
	// over the repetitions, per trace (the GETs of HTTPRoutes do not reach
	// it): what the trace costs the server, whatever the machine's load.
	ServerCPUMsPerTrace float64 `json:"serverCPUMsPerTrace"`
	// AllGatewaysMs: one trace of the same request with spec.gateway unset
	// (every Gateway), after an unmeasured one; AllGatewaysServerCPUMs the
	// server's CPU time over both.
	AllGatewaysMs          float64 `json:"allGatewaysMs"`
	AllGatewaysServerCPUMs float64 `json:"allGatewaysServerCPUMsPerTrace"`
	// ServerPeakRSSBytes: the server's VmHWM after the traces (the report's
	// server resources are read before them).
	ServerPeakRSSBytes int64 `json:"serverPeakRSSBytesAfter"`
	// The user's commands, each a fresh kubectl process (start, discovery
	// from its cache, the request, YAML printing), KubectlReps interleaved
	// runs after an unmeasured one; medians. Creating with validation also
	// fetches the group's OpenAPI schema through kube-apiserver.
	KubectlReps               int     `json:"kubectlReps"`
	KubectlGetMs              float64 `json:"kubectlGetHTTPRouteYAMLMs"`
	KubectlCreateMs           float64 `json:"kubectlCreateTraceYAMLMs"`
	KubectlCreateNoValidateMs float64 `json:"kubectlCreateTraceYAMLNoValidateMs"`
	KubectlRatio              float64 `json:"kubectlRatio"`
	// KubectlSSAR*: `kubectl create -f ssar.yaml -o yaml` of a
	// SelfSubjectAccessReview, with and without kubectl's validation.
	KubectlSSARMs           float64 `json:"kubectlCreateSelfSubjectAccessReviewYAMLMs,omitempty"`
	KubectlSSARNoValidateMs float64 `json:"kubectlCreateSelfSubjectAccessReviewYAMLNoValidateMs,omitempty"`
	// KubectlPluginMs: `kubectl effectivepolicy trace` (this project's
	// plugin, its tree output) for the same request; 0 when the plugin was
	// not given (-plugin-dir).
	KubectlPluginMs float64 `json:"kubectlPluginTraceMs"`
}

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
	body, err := rc.Get().AbsPath(routePath).SetHeader("Accept", "application/json").DoRaw(ctx)
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

// pickRoute sets the request to the first of routes (sorted by
// namespace/name) that a trace of its first hostname and first path
// matches: a route naming only a listener whose hostname it does not share
// is not served, and a trace that stops early would measure less work.
func (t *tracer) pickRoute(ctx context.Context, routes []*routeForTrace, r *traceResult) error {
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

// measureTrace times a RequestTrace create through kube-apiserver with the
// generated clientset against GETs of the traced HTTPRoute with the
// dynamic client (both JSON, both decoded, the same rest config),
// interleaved, reps times each after 3 unmeasured ones; then a trace of
// every Gateway and the kubectl commands.
func measureTrace(ctx context.Context, cfg *rest.Config, rc rest.Interface, dc dynamic.Interface, kubeconfig, pluginDir string, reps, pid int) (traceResult, error) {
	var r traceResult
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
	logf("RequestTrace: Gateway %s (%d HTTPRoutes name it), %s%s (route %s), %d repetitions against GET httproute %s",
		gw, r.RoutesNamingIt, r.Host, r.Path, r.Route, reps, r.Route)
	get := func() (time.Duration, error) {
		t0 := time.Now()
		_, err := dc.Resource(httpRouteGVR).Namespace(t.routeNS).Get(ctx, t.route, metav1.GetOptions{})
		return time.Since(t0), err
	}
	var cpu0 float64
	for i := 0; i < 3+reps; i++ {
		if i == 3 {
			cpu0, _ = procCPUSeconds(pid)
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
	cpu1, _ := procCPUSeconds(pid)
	// Both traces ran per repetition; the server's CPU is shared between
	// them in proportion to nothing measurable, so it is given per pair.
	r.ServerCPUMsPerTrace = (cpu1 - cpu0) * 1000 / float64(reps)
	r.TraceP50, r.TraceP90 = percentileMs(r.TraceMs, 0.5), percentileMs(r.TraceMs, 0.9)
	r.PortTraceP50, r.PortTraceP90 = percentileMs(r.PortTraceMs, 0.5), percentileMs(r.PortTraceMs, 0.9)
	r.GetP50, r.GetP90 = percentileMs(r.GetMs, 0.5), percentileMs(r.GetMs, 0.9)
	r.RatioP50, r.RatioP90 = r.TraceP50/r.GetP50, r.TraceP90/r.GetP90
	r.PortRatioP50, r.PortRatioP90 = r.PortTraceP50/r.GetP50, r.PortTraceP90/r.GetP90
	logf("  trace p50 %.1f ms p90 %.1f ms; on port %d p50 %.1f ms p90 %.1f ms (server CPU %.1f ms per pair); GET httproute p50 %.1f ms p90 %.1f ms; ratio %.2f× / %.2f×, on the port %.2f× / %.2f×",
		r.TraceP50, r.TraceP90, t.port, r.PortTraceP50, r.PortTraceP90, r.ServerCPUMsPerTrace, r.GetP50, r.GetP90, r.RatioP50, r.RatioP90, r.PortRatioP50, r.PortRatioP90)

	if err := t.everyGateway(ctx, &r); err != nil {
		return r, err
	}
	if err := kubectlTrace(ctx, kubeconfig, pluginDir, t.spec(true, false), t.routeNS, t.route, kubectlReps, &r); err != nil {
		return r, err
	}
	logf("  kubectl get httproute -o yaml %.0f ms; kubectl create -f trace.yaml -o yaml %.0f ms (%.2f×), with --validate=false %.0f ms; kubectl effectivepolicy trace %.0f ms (medians of %d)",
		r.KubectlGetMs, r.KubectlCreateMs, r.KubectlRatio, r.KubectlCreateNoValidateMs, r.KubectlPluginMs, r.KubectlReps)
	return r, nil
}

// everyGateway times the trace with spec.gateway unset, the second of two
// runs, with the server's CPU time over both and its peak RSS afterwards.
func (t *tracer) everyGateway(ctx context.Context, r *traceResult) error {
	cpu0, _ := procCPUSeconds(t.pid)
	for i := 0; i < 2; i++ {
		d, err := t.trace(ctx, false, false)
		if err != nil {
			return fmt.Errorf("RequestTrace of every Gateway: %w", err)
		}
		r.AllGatewaysMs = msOf(d)
	}
	cpu1, _ := procCPUSeconds(t.pid)
	r.AllGatewaysServerCPUMs = (cpu1 - cpu0) * 1000 / 2
	if st, err := procStatusKB(t.pid); err == nil {
		r.ServerPeakRSSBytes = st["VmHWM"] << 10
	}
	logf("  trace of every Gateway: %.0f ms (server CPU %.0f ms per trace); server peak RSS now %d MiB",
		r.AllGatewaysMs, r.AllGatewaysServerCPUMs, r.ServerPeakRSSBytes>>20)
	return nil
}

// kubectlReps: each kubectl command costs a process start; a few runs
// give a median without making the measurement long.
const kubectlReps = 5

// kubectlTrace times `kubectl get httproute -o yaml` and `kubectl create
// -f trace.yaml -o yaml` (with and without client-side validation), and
// `kubectl effectivepolicy trace` when pluginDir holds the plugin, reps
// interleaved runs each after an unmeasured one, into r.
func kubectlTrace(ctx context.Context, kubeconfig, pluginDir string, in *v1alpha1.RequestTrace, rNS, rName string, reps int, r *traceResult) error {
	dir, err := os.MkdirTemp("", "e2ebench-trace")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	in = in.DeepCopy()
	in.APIVersion, in.Kind = v1alpha1.SchemeGroupVersion.String(), "RequestTrace"
	doc, err := json.Marshal(in) // JSON is YAML
	if err != nil {
		return err
	}
	file := filepath.Join(dir, "trace.yaml")
	if err := os.WriteFile(file, doc, 0o644); err != nil {
		return err
	}
	// Kubernetes' own create-only kind, for reference: kubectl's default
	// validation costs it the same.
	ssar := filepath.Join(dir, "ssar.yaml")
	ssarDoc := fmt.Sprintf(`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"verb":"get","group":"gateway.networking.k8s.io","resource":"httproutes","namespace":%q,"name":%q}}}`, rNS, rName)
	if err := os.WriteFile(ssar, []byte(ssarDoc), 0o644); err != nil {
		return err
	}
	cmds := [][]string{
		{"get", "httproute", rName, "-n", rNS, "-o", "yaml"},
		{"create", "-f", file, "-o", "yaml"},
		{"create", "-f", file, "-o", "yaml", "--validate=false"},
		{"create", "-f", ssar, "-o", "yaml"},
		{"create", "-f", ssar, "-o", "yaml", "--validate=false"},
	}
	env := os.Environ()
	if pluginDir != "" {
		// kubectl finds its plugins on PATH.
		abs, err := filepath.Abs(pluginDir)
		if err != nil {
			return err
		}
		env = append(env, "PATH="+abs+string(filepath.ListSeparator)+os.Getenv("PATH"))
		g := in.Spec.Gateway
		cmds = append(cmds, []string{"effectivepolicy", "trace", "--gateway", g.Namespace + "/" + g.Name,
			"--host", in.Spec.Request.Host, "--path", in.Spec.Request.Path})
	}
	times := make([][]float64, len(cmds))
	for i := -1; i < reps; i++ {
		for c, args := range cmds {
			t0 := time.Now()
			// The flag goes last: kubectl looks for a plugin only among the
			// arguments before the first flag.
			cmd := exec.CommandContext(ctx, "kubectl", append(append([]string(nil), args...), "--kubeconfig", kubeconfig)...)
			cmd.Env = env
			if _, err := cmd.Output(); err != nil {
				return fmt.Errorf("kubectl %v: %w", args, err)
			}
			if i >= 0 {
				times[c] = append(times[c], msOf(time.Since(t0)))
			}
		}
	}
	r.KubectlReps = reps
	r.KubectlGetMs, r.KubectlCreateMs, r.KubectlCreateNoValidateMs = median(times[0]), median(times[1]), median(times[2])
	r.KubectlRatio = r.KubectlCreateMs / r.KubectlGetMs
	r.KubectlSSARMs, r.KubectlSSARNoValidateMs = median(times[3]), median(times[4])
	if pluginDir != "" {
		r.KubectlPluginMs = median(times[5])
	}
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

// percentileMs is the nearest-rank percentile.
func percentileMs(xs []float64, p float64) float64 {
	c := append([]float64(nil), xs...)
	sort.Float64s(c)
	return pct(c, p)
}

// mdTrace: the trace against its baseline.
func mdTrace(p func(string, ...interface{}), r Report) {
	x := r.Trace
	if x.Reps == 0 {
		return
	}
	p("## RequestTrace against the Gateway with the most routes")
	p("")
	p("Gateway %s, named by %d HTTPRoutes; the request is %s%s, which the trace matches to route %s (%d matches, one per listener taking the host; %.1f KB of JSON). %d interleaved repetitions after 3 unmeasured ones:",
		x.Gateway, x.RoutesNamingIt, x.Host, x.Path, x.Route, x.Matches, float64(x.ResponseBytes)/1e3, x.Reps)
	p("")
	p("| request | p50 | p90 |")
	p("|---|---|---|")
	p("| GET httproute %s (baseline; dynamic client, JSON) | %.1f ms | %.1f ms |", x.Route, x.GetP50, x.GetP90)
	p("| create RequestTrace, spec.gateway %s (generated clientset, JSON) | %.1f ms | %.1f ms |", x.Gateway, x.TraceP50, x.TraceP90)
	p("| ratio | **%.2f×** | %.2f× |", x.RatioP50, x.RatioP90)
	p("| create RequestTrace, the same with spec.port %d (%d match, %.1f KB) | %.1f ms | %.1f ms |", x.Port, x.PortMatches, float64(x.PortResponseBytes)/1e3, x.PortTraceP50, x.PortTraceP90)
	p("| ratio | **%.2f×** | %.2f× |", x.PortRatioP50, x.PortRatioP90)
	p("")
	p("The server's CPU time over the repetitions: %.1f ms per pair of traces (on 2 shared cores the client, kube-apiserver and etcd take the rest of the wall time).", x.ServerCPUMsPerTrace)
	p("")
	p("The user's commands (each a fresh kubectl process), medians of %d interleaved runs after an unmeasured one:", x.KubectlReps)
	p("")
	p("| command | median | ratio to `kubectl get` |")
	p("|---|---|---|")
	p("| `kubectl get httproute %s -o yaml` | %.0f ms | 1 |", x.Route, x.KubectlGetMs)
	p("| `kubectl create -f trace.yaml -o yaml` | %.0f ms | %.2f× |", x.KubectlCreateMs, x.KubectlRatio)
	p("| `kubectl create -f trace.yaml -o yaml --validate=false` | %.0f ms | %.2f× |", x.KubectlCreateNoValidateMs, x.KubectlCreateNoValidateMs/x.KubectlGetMs)
	if x.KubectlSSARMs > 0 {
		p("| for reference, Kubernetes' own create-only kind: `kubectl create -f ssar.yaml -o yaml` (a SelfSubjectAccessReview) | %.0f ms | %.2f× |", x.KubectlSSARMs, x.KubectlSSARMs/x.KubectlGetMs)
		p("| the same with --validate=false | %.0f ms | %.2f× |", x.KubectlSSARNoValidateMs, x.KubectlSSARNoValidateMs/x.KubectlGetMs)
	}
	if x.KubectlPluginMs > 0 {
		p("| `kubectl effectivepolicy trace --gateway %s --host %s --path %s` | %.0f ms | %.2f× |", x.Gateway, x.Host, x.Path, x.KubectlPluginMs, x.KubectlPluginMs/x.KubectlGetMs)
	}
	p("")
	p("The same trace with spec.gateway unset (every Gateway), once after an unmeasured one: %.0f ms (%.0f ms of server CPU per trace). The server's peak RSS after the traces: %.2f GiB (%.2f GiB before them, under Server resources).",
		x.AllGatewaysMs, x.AllGatewaysServerCPUMs, float64(x.ServerPeakRSSBytes)/giB, float64(r.Server.PeakRSSBytes)/giB)
	p("")
}

package report

// The verdicts: each target's goal and what this run measured against it.

import (
	"fmt"
)

const giB = 1 << 30

func targets(r Report) []Target {
	var t []Target
	// The targets are ratios to a baseline measured in the same run (they
	// replace absolute ones, which no aggregated server meets on 2 shared
	// cores), and a start-up bound.
	t = append(t, Target{
		Goal:     "ready within 15 s of informers syncing",
		Measured: fmt.Sprintf("%.1f s (ready %.1f s, informers synced %.1f s after the live layer started)", r.StartUp.ReadyAfterSyncSeconds, r.StartUp.FirstComputationReady, r.StartUp.InformersSyncedSeconds),
		Met:      r.StartUp.ReadyAfterSyncSeconds <= 15,
	})
	if x := r.UserCommands; x.Reps > 0 {
		t = append(t, Target{
			Goal:     "`kubectl get effectivepolicy R -o yaml` within 1.25× of `kubectl get httproute R -o yaml` (medians, interleaved)",
			Measured: fmt.Sprintf("%.0f ms against %.0f ms = %.2f×", x.GetEPMedian*1000, x.GetRouteMedian*1000, x.GetRatio),
			Met:      x.GetRatio <= 1.25,
		})
		t = append(t, Target{
			Goal:     "`kubectl get effectivepolicies -A` within 1.5× of `kubectl get httproutes -A`",
			Measured: listMeasured(x),
			Met:      x.ListRatio <= 1.5,
		})
	}
	if x := r.Gwctl; x.Version != "" {
		m := fmt.Sprintf("gwctl %s: %.2f s against %.0f ms = %.0f×", x.Version, x.GwctlMedian, x.OursMedian*1000, x.Ratio)
		if x.Failed != "" {
			m = "gwctl could not answer: " + x.Failed
		}
		t = append(t, Target{
			Goal:     "`kubectl get effectivepolicy R -o yaml` at least 100× faster than `gwctl describe httproute R`",
			Measured: m,
			Met:      x.Failed == "" && x.Ratio >= 100,
		})
	}
	p50, p99 := r.Get.P50Ms/r.GetHTTPRoute.P50Ms, r.Get.P99Ms/r.GetHTTPRoute.P99Ms
	t = append(t, Target{
		Goal: "GET p50 and p99 at concurrency 16 within 1.25× of kube-apiserver's own HTTPRoute GETs",
		Measured: fmt.Sprintf("p50 %.1f ms = %.2f×, p99 %.1f ms = %.2f× (HTTPRoutes: p50 %.1f ms, p99 %.1f ms)",
			r.Get.P50Ms, p50, r.Get.P99Ms, p99, r.GetHTTPRoute.P50Ms, r.GetHTTPRoute.P99Ms),
		Met: p50 <= 1.25 && p99 <= 1.25 && r.Get.Errors == 0,
	})
	t = append(t, Target{
		Goal: "LIST of every EffectivePolicy at ≥ the objects/s of the HTTPRoute LIST",
		Measured: fmt.Sprintf("HTTPRoute ÷ EffectivePolicy throughput: %.2f× in objects/s (%.2f× in bytes/s)",
			r.List.ObjectsPerSecRatio, r.List.BytesPerSecRatio),
		Met: r.List.ObjectsPerSecRatio <= 1,
	})
	for _, e := range r.Edits {
		goal, limit := "", 0.0
		switch e.Name {
		case "policy reaching ≥ 200 outputs":
			goal, limit = "a listener-level policy edit (~400 outputs): last watch event p99 ≤ 300 ms", 300
		case "Gateway-level policy":
			goal, limit = "a Gateway-level policy edit (~900 outputs): last watch event p99 ≤ 600 ms", 600
		default:
			continue
		}
		t = append(t, Target{
			Goal: goal,
			Measured: fmt.Sprintf("p99 %.0f ms for %d outputs, policy %s attached to %s (%d of %d repetitions complete)",
				e.P99Ms, e.Expected, e.Policy, e.Attached, e.Complete, e.Reps),
			Met: e.Complete == e.Reps && e.P99Ms <= limit,
		})
	}
	return append(t, featureTargets(r)...)
}

// featureTargets are the targets of PolicyReach, the review, RequestTrace
// and the server's memory.
func featureTargets(r Report) []Target {
	var t []Target
	if x := r.ReachGateway; x.Reps > 0 {
		t = append(t, Target{
			Goal: "`kubectl get policyreach` of a Gateway-level policy within 2× of `kubectl get httproute X -o yaml`",
			Measured: fmt.Sprintf("%s: `kubectl get ... -o yaml` %.0f ms = %.2f× (GET %.0f ms = %.2f×) of %.0f ms, for %d outputs, %.1f MB",
				x.Policy, x.KubectlMedian*1000, x.KubectlRatio, x.RawMedian*1000, x.RawRatio, x.BaselineMedian*1000, x.Outputs, float64(x.Bytes)/1e6),
			Met: x.KubectlRatio <= 2,
		})
	}
	if x := r.Reach; x.Reps > 0 {
		t = append(t, Target{
			Goal: "the PolicyReach of the most-reaching policy within 2× of `kubectl get httproute X -o yaml`",
			Measured: fmt.Sprintf("GET %.0f ms = %.2f× (`kubectl get ... -o yaml` %.0f ms = %.2f×) of %.0f ms, for %d outputs, %.1f MB",
				x.RawMedian*1000, x.RawRatio, x.KubectlMedian*1000, x.KubectlRatio, x.BaselineMedian*1000, x.Outputs, float64(x.Bytes)/1e6),
			Met: x.RawRatio <= 2,
		})
	}
	if x := r.Trace; x.Reps > 0 {
		if x := r.Review; x.Reps > 0 {
			t = append(t, Target{
				Goal:     "an EffectivePolicyReview of one Gateway-level policy edit answers in under 1 s through kube-apiserver",
				Measured: fmt.Sprintf("p50 %.0f ms, max %.0f ms, %d changed EffectivePolicies (%.1f MB)", x.P50, x.Max, x.Changes, float64(x.ResponseBytes)/1e6),
				Met:      x.Max < 1000,
			})
		}
		t = append(t, traceTargets(x)...)
	}
	if x := r.Restart; x != nil {
		t = append(t, Target{
			Goal: "after a restart with a warm cache, restored outputs served within 3 s (through kube-apiserver)",
			Measured: fmt.Sprintf("%.2f s from the process's start through kube-apiserver (%.2f s on the server's own port; /readyz %.2f s), the same resourceVersion as before: %t",
				x.AggregatedSeconds, x.DirectSeconds, x.ReadyzSeconds, x.AggregatedSameRV && x.DirectSameRV),
			Met: x.AggregatedSeconds <= 3 && x.AggregatedSameRV,
		})
	}
	t = append(t, Target{
		Goal: "RSS < 1 GiB",
		Measured: fmt.Sprintf("peak %.2f GiB, %.2f GiB at the end (%.0f MiB of it the process's own memory, %.0f MiB pages of mapped files: the bbolt cache, the binary)",
			float64(r.Server.PeakRSSBytes)/giB, float64(r.Server.EndRSSBytes)/giB, float64(r.Server.EndRSSAnonBytes)/(1<<20), float64(r.Server.EndRSSFileBytes)/(1<<20)),
		Met: r.Server.PeakRSSBytes < giB,
	})
	return t
}

// traceTargets: a RequestTrace as users run it, judged against `kubectl get httproute -o
// yaml` (docs/requesttrace.md, "Speed", says why these commands), and the bare API for the
// record.
func traceTargets(x TraceResult) []Target {
	users := fmt.Sprintf("`kubectl create -f trace.yaml -o yaml --validate=false` %.0f ms = %.2f×", x.KubectlCreateNoValidateMs, x.KubectlCreateNoValidateMs/x.KubectlGetMs)
	met := x.KubectlCreateNoValidateMs/x.KubectlGetMs <= 2
	if x.KubectlPluginMs > 0 {
		users = fmt.Sprintf("`kubectl effectivepolicy trace` %.0f ms = %.2f×, ", x.KubectlPluginMs, x.KubectlPluginMs/x.KubectlGetMs) + users
		met = met && x.KubectlPluginMs/x.KubectlGetMs <= 2
	}
	users += fmt.Sprintf(" of %.0f ms (medians); with kubectl's default validation %.0f ms = %.2f×", x.KubectlGetMs, x.KubectlCreateMs, x.KubectlRatio)
	if x.KubectlSSARMs > 0 {
		users += fmt.Sprintf(", as for a SelfSubjectAccessReview: %.2f×", x.KubectlSSARMs/x.KubectlGetMs)
	}
	t := []Target{{
		Goal:     "a RequestTrace as users run it within 2× of `kubectl get httproute R -o yaml`",
		Measured: users,
		Met:      met,
	}, {
		Goal: "the bare API: a RequestTrace against the Gateway with the most routes, every port, against a GET of an HTTPRoute through kube-apiserver",
		Measured: fmt.Sprintf("p50 %.1f ms = %.2f× of %.1f ms (p90 %.2f×), Gateway %s named by %d HTTPRoutes",
			x.TraceP50, x.RatioP50, x.GetP50, x.RatioP90, x.Gateway, x.RoutesNamingIt),
		Record: true,
	}}
	if x.PortTraceP50 > 0 {
		t = append(t, Target{
			Goal: "the bare API: the same RequestTrace on the port the request arrives on (spec.port), against that GET",
			Measured: fmt.Sprintf("p50 %.1f ms = %.2f× (p90 %.2f×), %d match, %.1f KB",
				x.PortTraceP50, x.PortRatioP50, x.PortRatioP90, x.PortMatches, float64(x.PortResponseBytes)/1e3),
			Record: true,
		})
	}
	return t
}

// listMeasured: the paged `kubectl get -A` pair, with what kubectl's rate limit alone takes
// and the same pair in one request when measured.
func listMeasured(x UserCmdResult) string {
	m := fmt.Sprintf("%.2f s against %.2f s = %.2f×", x.ListEPMedian, x.ListRouteMedian, x.ListRatio)
	if len(x.ListOneEP) > 0 {
		m += fmt.Sprintf(" (kubectl's client-side rate limit alone: %.1f s for %d pages against %.1f s for %d; in one request, `--chunk-size=0`: %.2f s against %.2f s = %.2f×)",
			x.ThrottleEPSeconds, x.PagesEP, x.ThrottleRouteSeconds, x.PagesRoute, x.ListOneEPMedian, x.ListOneRouteMedian, x.ListOneRatio)
	}
	return m
}

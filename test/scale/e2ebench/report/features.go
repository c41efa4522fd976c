package report

// The markdown sections of the user's commands, gwctl, PolicyReach,
// RequestTrace and EffectivePolicyReview, each against its baseline.

func mdUserCommands(p func(string, ...interface{}), r Report) {
	x := r.UserCommands
	if x.Reps == 0 {
		return
	}
	p("## The user's own commands")
	p("")
	p("Each a fresh kubectl process (start, discovery from its cache, the request, printing), the two commands of a row interleaved after an unmeasured run of each; medians.")
	p("")
	p("| command | ours | kube-apiserver's | ratio |")
	p("|---|---|---|---|")
	p("| `kubectl get effectivepolicy %s -o yaml` against `kubectl get httproute` of the same (%d runs) | %.0f ms | %.0f ms | **%.2f×** |", x.Route, x.Reps, x.GetEPMedian*1000, x.GetRouteMedian*1000, x.GetRatio)
	p("| `kubectl get effectivepolicies -A` against `kubectl get httproutes -A` (%d runs, paged by kubectl) | %.2f s | %.2f s | **%.2f×** |", x.ListReps, x.ListEPMedian, x.ListRouteMedian, x.ListRatio)
	if len(x.ListOneEP) > 0 {
		p("| the same in one request, `--chunk-size=0` (%d runs) | %.2f s | %.2f s | **%.2f×** |", x.ListReps, x.ListOneEPMedian, x.ListOneRouteMedian, x.ListOneRatio)
		p("")
		p("Paged, kubectl asks for %d objects at a time through client-go's default client-side rate limiter (a burst of %d requests, then %.0f per second): %d pages of EffectivePolicies must wait at least %.1f s for it, %d pages of HTTPRoutes %.1f s, whatever the server.",
			KubectlChunk, KubectlBurst, KubectlQPS, x.PagesEP, x.ThrottleEPSeconds, x.PagesRoute, x.ThrottleRouteSeconds)
	}
	p("")
}

func mdGwctl(p func(string, ...interface{}), r Report) {
	x := r.Gwctl
	if x.Version == "" {
		return
	}
	p("## Against gwctl")
	p("")
	if x.Failed != "" {
		p("gwctl %s could not answer `describe httproute %s`: %s", x.Version, x.Route, x.Failed)
		p("")
		return
	}
	p("gwctl %s (kubernetes-sigs/gwctl, built from its Go module), `gwctl describe httproute %s`, against `kubectl get effectivepolicy` of the same route with `-o yaml`; each a fresh process, interleaved, %d runs after an unmeasured one; medians:", x.Version, x.Route, x.Reps)
	p("")
	p("| command | median |")
	p("|---|---|")
	p("| `gwctl describe httproute` | %.2f s |", x.GwctlMedian)
	p("| `kubectl get effectivepolicy -o yaml` | %.0f ms |", x.OursMedian*1000)
	p("| ratio | **%.0f×** |", x.Ratio)
	p("")
}

// mdReach: the PolicyReach of the most-reaching policy against the baseline.
func mdReach(p func(string, ...interface{}), r Report) {
	mdReachOf(p, r.Reach, "the most-reaching policy",
		"The goal of issue #17 is judged on the GET: `kubectl -o yaml` adds kubectl's own conversion of the whole object to YAML, which grows with its size on the client and says nothing of the server.")
	mdReachOf(p, r.ReachGateway, "a Gateway-level policy (the one the edit and the review use)",
		"Issue #20 judges the user's command, `kubectl get policyreach ... -o yaml`.")
}

func mdReachOf(p func(string, ...interface{}), x ReachResult, what, note string) {
	if x.Reps == 0 {
		return
	}
	p("## PolicyReach of %s", what)
	p("")
	p("%s, named as a source by %d outputs; its PolicyReach is %.1f MB of JSON. %d interleaved repetitions, medians:", x.Policy, x.Outputs, float64(x.Bytes)/1e6, x.Reps)
	p("")
	p("| request | median | ratio to the baseline |")
	p("|---|---|---|")
	p("| `kubectl get httproute %s -o yaml` (baseline) | %.0f ms | 1 |", x.Route, x.BaselineMedian*1000)
	p("| `kubectl get policyreach ... -o yaml` | %.0f ms | **%.2f×** |", x.KubectlMedian*1000, x.KubectlRatio)
	p("| GET of the PolicyReach (client-go, JSON, through kube-apiserver) | %.0f ms | **%.2f×** |", x.RawMedian*1000, x.RawRatio)
	p("")
	p("%s", note)
	p("")
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

func mdReview(p func(string, ...interface{}), r Report) {
	x := r.Review
	if x.Reps == 0 {
		return
	}
	p("## EffectivePolicyReview of a Gateway-level policy edit")
	p("")
	p("The edit the edit measurement makes (policy %s), proposed instead of applied: %d changed EffectivePolicies in the answer (%.1f MB of JSON), created %d times with the generated clientset after an unmeasured one.", x.Policy, x.Changes, float64(x.ResponseBytes)/1e6, x.Reps)
	p("")
	p("| p50 | max |")
	p("|---|---|")
	p("| %.0f ms | %.0f ms |", x.P50, x.Max)
	p("")
}

package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// gwctlResult: gwctl (kubernetes-sigs/gwctl, built from its Go module at a
// pinned version by hack/bench-e2e.sh), the Gateway API project's own tool
// for "which policies affect this route", answering `gwctl describe
// httproute R -n NS` on the loaded cluster, against `kubectl get
// effectivepolicy R -n NS -o yaml` for the same route (issue #20's anchor:
// ≥ 100× at scale 1). gwctl reads the cluster's Gateway API objects and
// policies on every run and computes in the client.
type gwctlResult struct {
	Version string    `json:"version"`
	Route   string    `json:"route"`
	Reps    int       `json:"reps"`
	Gwctl   []float64 `json:"gwctlDescribeHTTPRouteSeconds"`
	Ours    []float64 `json:"kubectlGetEffectivePolicyYAMLSeconds"`
	// Medians; Ratio is gwctl's ÷ ours (how many times faster we answer).
	GwctlMedian, OursMedian, Ratio float64
	// Failed holds gwctl's error output when it could not answer.
	Failed string `json:"failed,omitempty"`
}

// gwctlTimeout bounds one run of either command.
const gwctlTimeout = 10 * time.Minute

// measureGwctl times gwctl and our answer for route ns/name, interleaved,
// reps times each after an unmeasured run of each.
func measureGwctl(ctx context.Context, gwctl, version, kubeconfig, route string, reps int) (gwctlResult, error) {
	r := gwctlResult{Version: version, Route: route, Reps: reps}
	ns, name, _ := strings.Cut(route, "/")
	logf("gwctl %s: describe httproute %s, %d repetitions against kubectl get effectivepolicy -o yaml", version, route, reps)
	run := func(bin string, args ...string) (float64, error) {
		ctx, cancel := context.WithTimeout(ctx, gwctlTimeout)
		defer cancel()
		t0 := time.Now()
		out, err := exec.CommandContext(ctx, bin, append(args, "--kubeconfig", kubeconfig)...).CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("%s %v: %w: %s", bin, args, err, tail(out, 400))
		}
		return time.Since(t0).Seconds(), nil
	}
	for i := -1; i < reps; i++ {
		dg, err := run(gwctl, "describe", "httproute", name, "-n", ns)
		if err != nil {
			// Reported, not fatal: the anchor is a third party's tool.
			r.Failed = err.Error()
			logf("  gwctl failed: %v", err)
			return r, nil
		}
		do, err := run("kubectl", "get", "effectivepolicy", name, "-n", ns, "-o", "yaml")
		if err != nil {
			return r, err
		}
		if i >= 0 {
			r.Gwctl, r.Ours = append(r.Gwctl, dg), append(r.Ours, do)
		}
	}
	r.GwctlMedian, r.OursMedian = median(r.Gwctl), median(r.Ours)
	r.Ratio = r.GwctlMedian / r.OursMedian
	logf("  gwctl describe httproute %.2f s; kubectl get effectivepolicy -o yaml %.0f ms: %.0f×", r.GwctlMedian, r.OursMedian*1000, r.Ratio)
	return r, nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
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

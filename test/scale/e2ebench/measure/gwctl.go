package measure

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/report"
)

// gwctlTimeout bounds one run of either command.
const gwctlTimeout = 10 * time.Minute

// Gwctl times gwctl and our answer for route ns/name, interleaved,
// reps times each after an unmeasured run of each.
func Gwctl(ctx context.Context, gwctl, version, kubeconfig, route string, reps int) (report.GwctlResult, error) {
	r := report.GwctlResult{Version: version, Route: route, Reps: reps}
	ns, name, _ := strings.Cut(route, "/")
	Logf("gwctl %s: describe httproute %s, %d repetitions against kubectl get effectivepolicy -o yaml", version, route, reps)
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
			Logf("  gwctl failed: %v", err)
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
	r.GwctlMedian, r.OursMedian = Median(r.Gwctl), Median(r.Ours)
	r.Ratio = r.GwctlMedian / r.OursMedian
	Logf("  gwctl describe httproute %.2f s; kubectl get effectivepolicy -o yaml %.0f ms: %.0f×", r.GwctlMedian, r.OursMedian*1000, r.Ratio)
	return r, nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}

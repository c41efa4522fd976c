package measure

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/report"
)

// throttleFloor: pages of kubectlChunk objects and the seconds the rate
// limiter makes kubectl wait for them at least.
func throttleFloor(objects int) (int, float64) {
	pages := (objects + report.KubectlChunk - 1) / report.KubectlChunk
	return pages, float64(max(0, pages-report.KubectlBurst)) / report.KubectlQPS
}

// UserCommands times `kubectl get effectivepolicy R -n NS -o yaml`
// against `kubectl get httproute R -n NS -o yaml` for a route picked at
// random among those with an EffectivePolicy, reps interleaved runs each
// after an unmeasured one; then `kubectl get effectivepolicies -A` against
// `kubectl get httproutes -A`, listReps times each.
func UserCommands(ctx context.Context, kubeconfig string, idx *OutputIndex, routes []string, reps, listReps int, seed uint64) (report.UserCmdResult, error) {
	var r report.UserCmdResult
	has := map[string]bool{}
	for _, n := range idx.Names {
		has[n] = true
	}
	var candidates []string
	for _, rt := range routes {
		if has[rt] {
			candidates = append(candidates, rt)
		}
	}
	if len(candidates) == 0 {
		return r, fmt.Errorf("no HTTPRoute has an EffectivePolicy")
	}
	sort.Strings(candidates)
	r.Route = candidates[rand.New(rand.NewPCG(seed, 20)).IntN(len(candidates))]
	ns, name, _ := strings.Cut(r.Route, "/")
	r.Reps, r.ListReps = reps, listReps
	Logf("User commands: kubectl get effectivepolicy/httproute %s -o yaml (%d repetitions), kubectl get effectivepolicies/httproutes -A (%d)", r.Route, reps, listReps)
	kubectl := func(args ...string) (float64, error) {
		t0 := time.Now()
		if _, err := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...).Output(); err != nil {
			return 0, fmt.Errorf("kubectl %v: %w", args, err)
		}
		return time.Since(t0).Seconds(), nil
	}
	pair := func(n int, a, b []string, outA, outB *[]float64) error {
		for i := -1; i < n; i++ { // -1: unmeasured (discovery cache, decision cache)
			da, err := kubectl(a...)
			if err != nil {
				return err
			}
			db, err := kubectl(b...)
			if err != nil {
				return err
			}
			if i >= 0 {
				*outA, *outB = append(*outA, da), append(*outB, db)
			}
		}
		return nil
	}
	if err := pair(reps, []string{"get", "effectivepolicy", name, "-n", ns, "-o", "yaml"}, []string{"get", "httproute", name, "-n", ns, "-o", "yaml"}, &r.GetEP, &r.GetRoute); err != nil {
		return r, err
	}
	if err := pair(listReps, []string{"get", "effectivepolicies", "-A"}, []string{"get", "httproutes", "-A"}, &r.ListEP, &r.ListRoute); err != nil {
		return r, err
	}
	if err := pair(listReps, []string{"get", "effectivepolicies", "-A", "--chunk-size=0"}, []string{"get", "httproutes", "-A", "--chunk-size=0"}, &r.ListOneEP, &r.ListOneRoute); err != nil {
		return r, err
	}
	r.PagesEP, r.ThrottleEPSeconds = throttleFloor(len(idx.Names))
	r.PagesRoute, r.ThrottleRouteSeconds = throttleFloor(len(routes))
	r.ListOneEPMedian, r.ListOneRouteMedian = Median(r.ListOneEP), Median(r.ListOneRoute)
	r.ListOneRatio = r.ListOneEPMedian / r.ListOneRouteMedian
	r.GetEPMedian, r.GetRouteMedian = Median(r.GetEP), Median(r.GetRoute)
	r.ListEPMedian, r.ListRouteMedian = Median(r.ListEP), Median(r.ListRoute)
	r.GetRatio, r.ListRatio = r.GetEPMedian/r.GetRouteMedian, r.ListEPMedian/r.ListRouteMedian
	Logf("  get -o yaml: effectivepolicy %.0f ms, httproute %.0f ms (%.2f×); get -A: effectivepolicies %.2f s, httproutes %.2f s (%.2f×)",
		r.GetEPMedian*1000, r.GetRouteMedian*1000, r.GetRatio, r.ListEPMedian, r.ListRouteMedian, r.ListRatio)
	Logf("  get -A --chunk-size=0: effectivepolicies %.2f s, httproutes %.2f s (%.2f×); kubectl's rate limit alone: %d pages %.1f s, %d pages %.1f s",
		r.ListOneEPMedian, r.ListOneRouteMedian, r.ListOneRatio, r.PagesEP, r.ThrottleEPSeconds, r.PagesRoute, r.ThrottleRouteSeconds)
	return r, nil
}

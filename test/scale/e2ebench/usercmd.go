package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"sort"
	"strings"
	"time"
)

// userCmdResult: the commands a user types, each a fresh kubectl process,
// against the same command for the HTTPRoutes kube-apiserver serves itself,
// interleaved (issue #20: `kubectl get effectivepolicy R -o yaml` within
// 1.25× of `kubectl get httproute R -o yaml`; `kubectl get effectivepolicies
// -A` within 1.5× of `kubectl get httproutes -A`).
type userCmdResult struct {
	Route string `json:"route"`
	Reps  int    `json:"reps"`
	// One object, -o yaml, seconds per run.
	GetEP    []float64 `json:"kubectlGetEffectivePolicyYAMLSeconds"`
	GetRoute []float64 `json:"kubectlGetHTTPRouteYAMLSeconds"`
	// Every object of the kind, kubectl's default table (paged: kubectl asks
	// for 500 at a time), seconds per run.
	ListReps  int       `json:"listReps"`
	ListEP    []float64 `json:"kubectlGetEffectivePoliciesAllSeconds"`
	ListRoute []float64 `json:"kubectlGetHTTPRoutesAllSeconds"`
	// The same in one request (--chunk-size=0), seconds per run.
	ListOneEP    []float64 `json:"kubectlGetEffectivePoliciesAllOneRequestSeconds"`
	ListOneRoute []float64 `json:"kubectlGetHTTPRoutesAllOneRequestSeconds"`
	// Pages kubectl asks for (500 objects each), and the time kubectl's
	// client-side rate limit alone imposes on that many requests.
	PagesEP, PagesRoute                     int
	ThrottleEPSeconds, ThrottleRouteSeconds float64
	// Medians and their ratios (ours ÷ kube-apiserver's).
	GetEPMedian, GetRouteMedian, GetRatio             float64
	ListEPMedian, ListRouteMedian, ListRatio          float64
	ListOneEPMedian, ListOneRouteMedian, ListOneRatio float64
}

// kubectl sends API requests through client-go's default client-side rate
// limiter: a burst of 10, then 5 requests per second (it raises the limits
// for discovery only). A paged LIST waits on it for every page after the
// tenth.
const (
	kubectlChunk = 500
	kubectlBurst = 10
	kubectlQPS   = 5.0
)

// throttleFloor: pages of kubectlChunk objects and the seconds the rate
// limiter makes kubectl wait for them at least.
func throttleFloor(objects int) (int, float64) {
	pages := (objects + kubectlChunk - 1) / kubectlChunk
	return pages, float64(max(0, pages-kubectlBurst)) / kubectlQPS
}

// measureUserCommands times `kubectl get effectivepolicy R -n NS -o yaml`
// against `kubectl get httproute R -n NS -o yaml` for a route picked at
// random among those with an EffectivePolicy, reps interleaved runs each
// after an unmeasured one; then `kubectl get effectivepolicies -A` against
// `kubectl get httproutes -A`, listReps times each.
func measureUserCommands(ctx context.Context, kubeconfig string, idx *outputIndex, routes []string, reps, listReps int, seed uint64) (userCmdResult, error) {
	var r userCmdResult
	has := map[string]bool{}
	for _, n := range idx.names {
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
	logf("User commands: kubectl get effectivepolicy/httproute %s -o yaml (%d repetitions), kubectl get effectivepolicies/httproutes -A (%d)", r.Route, reps, listReps)
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
	r.PagesEP, r.ThrottleEPSeconds = throttleFloor(len(idx.names))
	r.PagesRoute, r.ThrottleRouteSeconds = throttleFloor(len(routes))
	r.ListOneEPMedian, r.ListOneRouteMedian = median(r.ListOneEP), median(r.ListOneRoute)
	r.ListOneRatio = r.ListOneEPMedian / r.ListOneRouteMedian
	r.GetEPMedian, r.GetRouteMedian = median(r.GetEP), median(r.GetRoute)
	r.ListEPMedian, r.ListRouteMedian = median(r.ListEP), median(r.ListRoute)
	r.GetRatio, r.ListRatio = r.GetEPMedian/r.GetRouteMedian, r.ListEPMedian/r.ListRouteMedian
	logf("  get -o yaml: effectivepolicy %.0f ms, httproute %.0f ms (%.2f×); get -A: effectivepolicies %.2f s, httproutes %.2f s (%.2f×)",
		r.GetEPMedian*1000, r.GetRouteMedian*1000, r.GetRatio, r.ListEPMedian, r.ListRouteMedian, r.ListRatio)
	logf("  get -A --chunk-size=0: effectivepolicies %.2f s, httproutes %.2f s (%.2f×); kubectl's rate limit alone: %d pages %.1f s, %d pages %.1f s",
		r.ListOneEPMedian, r.ListOneRouteMedian, r.ListOneRatio, r.PagesEP, r.ThrottleEPSeconds, r.PagesRoute, r.ThrottleRouteSeconds)
	return r, nil
}

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
			kubectlChunk, kubectlBurst, kubectlQPS, x.PagesEP, x.ThrottleEPSeconds, x.PagesRoute, x.ThrottleRouteSeconds)
	}
	p("")
}

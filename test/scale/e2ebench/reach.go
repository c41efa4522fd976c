package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"sort"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// reachResult is the PolicyReach of the most-reaching policy (issue #17:
// within 2× of `kubectl get httproute X -o yaml`), timed three ways,
// interleaved: the user's command, the baseline, and the bare GET through
// kube-apiserver.
type reachResult struct {
	Policy   string    `json:"policy"`
	Path     string    `json:"path"`
	Outputs  int       `json:"outputsNamingIt"`
	Bytes    int       `json:"bytes"`
	Route    string    `json:"baselineRoute"`
	Reps     int       `json:"reps"`
	Kubectl  []float64 `json:"kubectlGetReachYAMLSeconds"`
	Baseline []float64 `json:"kubectlGetHTTPRouteYAMLSeconds"`
	Raw      []float64 `json:"getReachSeconds"`
	// Medians and ratios to the baseline's median.
	KubectlMedian, BaselineMedian, RawMedian float64
	KubectlRatio, RawRatio                   float64
}

func reachPath(ns, name string) string {
	if ns == "" {
		return "/apis/effectivepolicy.dev/v1alpha1/clusterpolicyreaches/" + name
	}
	return fmt.Sprintf("/apis/effectivepolicy.dev/v1alpha1/namespaces/%s/policyreaches/%s", ns, name)
}

// mostReaching is the policy that the most outputs name as a source.
func mostReaching(idx *outputIndex) (*policyReach, error) {
	var top *policyReach
	for _, p := range idx.policies {
		if top == nil || p.named > top.named || p.named == top.named && p.id < top.id {
			top = p
		}
	}
	if top == nil {
		return nil, fmt.Errorf("no policy in the outputs")
	}
	return top, nil
}

// measureReach times the PolicyReach of policy top.
func measureReach(ctx context.Context, rc rest.Interface, kubeconfig string, top *policyReach, reps int, seed uint64) (reachResult, error) {
	routes, err := routeNames(ctx, rc)
	if err != nil {
		return reachResult{}, err
	}
	route := routes[rand.New(rand.NewPCG(seed, 17)).IntN(len(routes))]
	r := reachResult{Policy: top.id, Path: reachPath(top.ns, top.name), Outputs: top.named, Route: route, Reps: reps}
	logf("PolicyReach: %s (named by %d outputs), %d repetitions, against kubectl get httproute %s -o yaml", top.id, top.named, reps, route)
	kind, nsArgs := "clusterpolicyreach", []string{}
	if top.ns != "" {
		kind, nsArgs = "policyreach", []string{"-n", top.ns}
	}
	rns, rname, _ := strings.Cut(route, "/")
	kubectl := func(args ...string) (float64, int, error) {
		t0 := time.Now()
		out, err := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...).Output()
		d := time.Since(t0).Seconds()
		if err != nil {
			return d, 0, fmt.Errorf("kubectl %v: %w", args, err)
		}
		return d, len(out), nil
	}
	// One unmeasured run of each: kubectl's discovery cache, the server's
	// decision cache.
	if _, _, err := kubectl(append([]string{"get", kind, top.name, "-o", "yaml"}, nsArgs...)...); err != nil {
		return r, err
	}
	if _, _, err := kubectl("get", "httproute", rname, "-n", rns, "-o", "yaml"); err != nil {
		return r, err
	}
	for i := 0; i < reps; i++ {
		d, _, err := kubectl(append([]string{"get", kind, top.name, "-o", "yaml"}, nsArgs...)...)
		if err != nil {
			return r, err
		}
		r.Kubectl = append(r.Kubectl, d)
		if d, _, err = kubectl("get", "httproute", rname, "-n", rns, "-o", "yaml"); err != nil {
			return r, err
		}
		r.Baseline = append(r.Baseline, d)
		t0 := time.Now()
		body, err := rc.Get().AbsPath(r.Path).SetHeader("Accept", "application/json").DoRaw(ctx)
		if err != nil {
			return r, fmt.Errorf("GET %s: %w", r.Path, err)
		}
		r.Raw = append(r.Raw, time.Since(t0).Seconds())
		r.Bytes = len(body)
	}
	r.KubectlMedian, r.BaselineMedian, r.RawMedian = median(r.Kubectl), median(r.Baseline), median(r.Raw)
	r.KubectlRatio, r.RawRatio = r.KubectlMedian/r.BaselineMedian, r.RawMedian/r.BaselineMedian
	logf("  kubectl get %s -o yaml: median %.2f s; kubectl get httproute -o yaml: %.2f s; GET: %.2f s (%d MB)",
		kind, r.KubectlMedian, r.BaselineMedian, r.RawMedian, r.Bytes>>20)
	return r, nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	c := append([]float64(nil), xs...)
	sort.Float64s(c)
	return c[len(c)/2]
}

// mdReach: the PolicyReach of the most-reaching policy against the baseline.
func mdReach(p func(string, ...interface{}), r Report) {
	mdReachOf(p, r.Reach, "the most-reaching policy",
		"The goal of issue #17 is judged on the GET: `kubectl -o yaml` adds kubectl's own conversion of the whole object to YAML, which grows with its size on the client and says nothing of the server.")
	mdReachOf(p, r.ReachGateway, "a Gateway-level policy (the one the edit and the review use)",
		"Issue #20 judges the user's command, `kubectl get policyreach ... -o yaml`.")
}

func mdReachOf(p func(string, ...interface{}), x reachResult, what, note string) {
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

package measure

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/report"
)

func reachPath(ns, name string) string {
	if ns == "" {
		return "/apis/effectivepolicy.dev/v1alpha1/clusterpolicyreaches/" + name
	}
	return fmt.Sprintf("/apis/effectivepolicy.dev/v1alpha1/namespaces/%s/policyreaches/%s", ns, name)
}

// Reach times the PolicyReach of policy top.
func Reach(ctx context.Context, rc rest.Interface, kubeconfig string, top *PolicyReach, reps int, seed uint64) (report.ReachResult, error) {
	routes, err := RouteNames(ctx, rc)
	if err != nil {
		return report.ReachResult{}, err
	}
	route := routes[rand.New(rand.NewPCG(seed, 17)).IntN(len(routes))]
	r := report.ReachResult{Policy: top.ID, Path: reachPath(top.NS, top.Name), Outputs: top.Named, Route: route, Reps: reps}
	Logf("PolicyReach: %s (named by %d outputs), %d repetitions, against kubectl get httproute %s -o yaml", top.ID, top.Named, reps, route)
	kind, nsArgs := "clusterpolicyreach", []string{}
	if top.NS != "" {
		kind, nsArgs = "policyreach", []string{"-n", top.NS}
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
	if _, _, err := kubectl(append([]string{"get", kind, top.Name, "-o", "yaml"}, nsArgs...)...); err != nil {
		return r, err
	}
	if _, _, err := kubectl("get", "httproute", rname, "-n", rns, "-o", "yaml"); err != nil {
		return r, err
	}
	for i := 0; i < reps; i++ {
		d, _, err := kubectl(append([]string{"get", kind, top.Name, "-o", "yaml"}, nsArgs...)...)
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
	r.KubectlMedian, r.BaselineMedian, r.RawMedian = Median(r.Kubectl), Median(r.Baseline), Median(r.Raw)
	r.KubectlRatio, r.RawRatio = r.KubectlMedian/r.BaselineMedian, r.RawMedian/r.BaselineMedian
	Logf("  kubectl get %s -o yaml: median %.2f s; kubectl get httproute -o yaml: %.2f s; GET: %.2f s (%d MB)",
		kind, r.KubectlMedian, r.BaselineMedian, r.RawMedian, r.Bytes>>20)
	return r, nil
}

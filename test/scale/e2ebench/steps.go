package main

import (
	"context"
	"fmt"
	"path/filepath"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/edits"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/localup"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/measure"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/procfs"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/report"
)

// measureLists times LISTs, alternating the two resources so that both see the same load,
// and indexes the EffectivePolicies of the unmeasured first LIST.
func measureLists(ctx context.Context, rc rest.Interface, reps int, rep *measured) (*measure.OutputIndex, error) {
	measure.Logf("LIST: %d repetitions each of every EffectivePolicy and every HTTPRoute, after one unmeasured LIST of each", reps)
	// The warm-up: a fresh client process reading a 521 MB body first grows
	// its own heap (page faults, buffer doubling, garbage collection): its
	// first EffectivePolicy LIST took 6-11 s, the following ones 3-4 s,
	// against a 24 MB HTTPRoute LIST that hardly notices. Its body is the
	// one indexed.
	_, body, err := measure.TimedList(ctx, rc, measure.EPPath)
	if err != nil {
		return nil, err
	}
	epBody := append([]byte(nil), body...) // measure.TimedList reuses its buffer
	if _, _, err := measure.TimedList(ctx, rc, measure.RoutePath); err != nil {
		return nil, err
	}
	for i := 0; i < reps; i++ {
		r, _, err := measure.TimedList(ctx, rc, measure.EPPath)
		if err != nil {
			return nil, err
		}
		rep.List.EffectivePolicies = append(rep.List.EffectivePolicies, r)
		r, _, err = measure.TimedList(ctx, rc, measure.RoutePath)
		if err != nil {
			return nil, err
		}
		rep.List.HTTPRoutes = append(rep.List.HTTPRoutes, r)
		measure.Logf("  EffectivePolicies %.2f s (%d objects, %d MB); HTTPRoutes %.2f s (%d objects, %d MB)",
			rep.List.EffectivePolicies[i].Seconds, rep.List.EffectivePolicies[i].Objects, rep.List.EffectivePolicies[i].Bytes>>20,
			r.Seconds, r.Objects, r.Bytes>>20)
	}
	rep.List.EPMedian = measure.MedianRun(rep.List.EffectivePolicies)
	rep.List.RouteMedian = measure.MedianRun(rep.List.HTTPRoutes)
	rep.List.ObjectsPerSecRatio = rep.List.RouteMedian.ObjectsPerSec / rep.List.EPMedian.ObjectsPerSec
	rep.List.BytesPerSecRatio = rep.List.RouteMedian.BytesPerSecond / rep.List.EPMedian.BytesPerSecond
	rep.mark("after LIST")
	return measure.IndexOutputs(epBody)
}

// measureGets times single GETs of EffectivePolicies and, as the baseline, of HTTPRoutes.
func measureGets(ctx context.Context, rc rest.Interface, f *measureFlags, idx *measure.OutputIndex, rep *measured) error {
	kubePID := localup.PIDFromFile(filepath.Join(*f.local, "run", "kube-apiserver.pid"))
	serverPID := localup.PIDFromFile(filepath.Join(*f.local, "run", "effectivepolicy-apiserver.pid"))
	// timed runs measure.GetLatency and adds the CPU time per request both
	// processes spent meanwhile.
	timed := func(names []string, path func(string) string) (report.Latency, error) {
		k0, _ := procfs.CPUSeconds(kubePID)
		s0, _ := procfs.CPUSeconds(serverPID)
		l, err := measure.GetLatency(ctx, rc, names, path, *f.gets, *f.conc, *f.seed)
		k1, err1 := procfs.CPUSeconds(kubePID)
		s1, err2 := procfs.CPUSeconds(serverPID)
		if err == nil && err1 == nil && err2 == nil && l.Requests > 0 {
			l.KubeAPIServerCPUMs = (k1 - k0) * 1000 / float64(l.Requests)
			l.ServerCPUMs = (s1 - s0) * 1000 / float64(l.Requests)
		}
		return l, err
	}
	var err error
	measure.Logf("GET: %d single EffectivePolicies, concurrency %d", *f.gets, *f.conc)
	if rep.Get, err = timed(idx.Names, measure.EPGetPath); err != nil {
		return err
	}
	routes, err := measure.RouteNames(ctx, rc)
	if err != nil {
		return err
	}
	measure.Logf("GET: %d single HTTPRoutes (baseline), concurrency %d", *f.gets, *f.conc)
	if rep.GetHTTPRoute, err = timed(routes, measure.RouteGetPath); err != nil {
		return err
	}
	measure.Logf("  EffectivePolicies p50 %.1f ms p99 %.1f ms (%.0f/s; CPU per request: kube-apiserver %.2f ms, server %.2f ms); HTTPRoutes p50 %.1f ms p99 %.1f ms (%.0f/s; kube-apiserver %.2f ms)",
		rep.Get.P50Ms, rep.Get.P99Ms, rep.Get.PerSecond, rep.Get.KubeAPIServerCPUMs, rep.Get.ServerCPUMs,
		rep.GetHTTPRoute.P50Ms, rep.GetHTTPRoute.P99Ms, rep.GetHTTPRoute.PerSecond, rep.GetHTTPRoute.KubeAPIServerCPUMs)
	rep.mark("after GET")
	return nil
}

// measureReaches times the PolicyReach of the most-reaching policy and of
// the Gateway-level policy the edits use.
func measureReaches(ctx context.Context, rc rest.Interface, f *measureFlags, idx *measure.OutputIndex, rep *measured) error {
	top, err := measure.MostReaching(idx)
	if err != nil {
		return err
	}
	if rep.Reach, err = measure.Reach(ctx, rc, *f.kubeconfig, top, *f.reachReps, *f.seed); err != nil {
		return err
	}
	if gwPolicy, _ := idx.PickPolicies(); gwPolicy != nil {
		if rep.ReachGateway, err = measure.Reach(ctx, rc, *f.kubeconfig, gwPolicy, *f.reachReps, *f.seed); err != nil {
			return err
		}
	}
	rep.mark("after PolicyReach")
	return nil
}

// measureUserSide times the user's own kubectl commands and, when given,
// gwctl on the same route.
func measureUserSide(ctx context.Context, rc rest.Interface, f *measureFlags, idx *measure.OutputIndex, rep *measured) error {
	routes, err := measure.RouteNames(ctx, rc)
	if err != nil {
		return err
	}
	if rep.UserCommands, err = measure.UserCommands(ctx, *f.kubeconfig, idx, routes, *f.userReps, *f.userListReps, *f.seed); err != nil {
		return err
	}
	rep.mark("after the user's commands")
	if *f.gwctl != "" {
		if rep.Gwctl, err = measure.Gwctl(ctx, *f.gwctl, *f.gwctlVersion, *f.kubeconfig, rep.UserCommands.Route, *f.gwctlReps); err != nil {
			return err
		}
		rep.mark("after gwctl")
	}
	return nil
}

// measureEdits times policy edits to their last watch event: a Gateway-level policy (the
// median reach among them) and the policy whose reach is closest to 200 outputs.
func measureEdits(ctx context.Context, rc rest.Interface, dc dynamic.Interface, f *measureFlags, idx *measure.OutputIndex, rep *measured) error {
	gw, near := idx.PickPolicies()
	w, err := edits.NewWatcher(ctx, rc, idx.RV)
	if err != nil {
		return err
	}
	defer w.Stop()
	for _, e := range []struct {
		name, field string
		p           *measure.PolicyReach
	}{{"Gateway-level policy", "benchEditGateway", gw}, {"policy reaching ≥ 200 outputs", "benchEdit200", near}} {
		if e.p == nil {
			return fmt.Errorf("no %s in the outputs", e.name)
		}
		measure.Logf("edit: %s %s (attached to %s, %d outputs), %d times", e.name, e.p.ID, e.p.Attached, len(e.p.Keys), *f.edits)
		r, err := edits.Measure(ctx, dc, w, e.name, e.field, e.p, *f.edits, *f.editTimeout)
		if err != nil {
			return err
		}
		measure.Logf("  p50 %.0f ms, p99 %.0f ms, %d/%d complete", r.P50Ms, r.P99Ms, r.Complete, r.Reps)
		rep.Edits = append(rep.Edits, r)
	}
	rep.mark("after edits")
	return nil
}

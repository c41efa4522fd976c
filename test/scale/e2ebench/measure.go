package main

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"time"

	"k8s.io/client-go/rest"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/benchkit"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/edits"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/localup"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/measure"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/procfs"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/report"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/trace"
)

// measureFlags are the flags of `e2ebench measure`.
type measureFlags struct {
	kubeconfig, local, loadFile, readyFile, out *string
	pluginDir, gwctl, gwctlVersion, profileDir  *string
	gwctlReps                                   *int
	gets, conc, listReps, edits, reachReps      *int
	traceReps, reviewReps                       *int
	userReps, userListReps                      *int
	editTimeout                                 *time.Duration
	seed                                        *uint64
	machine                                     benchkit.KV
}

func parseMeasureFlags(args []string) *measureFlags {
	fs := newFlagSet("measure")
	f := &measureFlags{
		kubeconfig:   fs.String("kubeconfig", "", "admin kubeconfig of the control plane"),
		local:        fs.String("local", ".local", "local-up state directory"),
		loadFile:     fs.String("load", "", "JSON written by `e2ebench load`"),
		readyFile:    fs.String("ready", "", "JSON written by `e2ebench ready`"),
		out:          fs.String("o", "docs/benchmarks/e2e", "output path without extension (.md and .json)"),
		gwctl:        fs.String("gwctl", "", "gwctl binary, to time `gwctl describe httproute` (empty: not timed)"),
		gwctlVersion: fs.String("gwctl-version", "", "gwctl's version, for the report"),
		gwctlReps:    fs.Int("gwctl-reps", 3, "repetitions of gwctl describe httproute and its comparison"),
		pluginDir:    fs.String("plugin-dir", "", "directory holding kubectl-effectivepolicy, to time `kubectl effectivepolicy trace` (empty: not timed)"),
		profileDir:   fs.String("profile-dir", "", "write CPU profiles of the server serving LISTs and GETs here, after the measurement (empty: none)"),
		gets:         fs.Int("gets", 4000, "single GET requests"),
		conc:         fs.Int("concurrency", 16, "concurrent GETs"),
		listReps:     fs.Int("list-reps", 3, "LIST repetitions of each resource"),
		reachReps:    fs.Int("reach-reps", 7, "repetitions of the PolicyReach GET and its baseline"),
		traceReps:    fs.Int("trace-reps", 50, "repetitions of the RequestTrace create and its baseline GET"),
		reviewReps:   fs.Int("review-reps", 10, "repetitions of the EffectivePolicyReview create"),
		userReps:     fs.Int("user-reps", 11, "repetitions of kubectl get effectivepolicy|httproute R -o yaml"),
		userListReps: fs.Int("user-list-reps", 3, "repetitions of kubectl get effectivepolicies|httproutes -A"),
		edits:        fs.Int("edits", 20, "repetitions of each policy edit"),
		editTimeout:  fs.Duration("edit-timeout", 120*time.Second, "give up waiting for an edit's events after this long"),
		seed:         fs.Uint64("seed", 1, "seed of the GET sample"),
	}
	fs.Var(&f.machine, "machine", "key=value describing the machine or run (repeatable)")
	_ = fs.Parse(args)
	return f
}

// measured is the report being measured and the server process it follows.
type measured struct {
	report.Report
	serverPID int
}

// mark records the load average and the server's peak RSS after a step.
func (r *measured) mark(step string) {
	r.LoadAvg[step] = procfs.LoadAvg()
	if r.serverPID == 0 {
		return
	}
	if st, err := procfs.StatusKB(r.serverPID); err == nil {
		r.PeakRSSAt[step] = st["VmHWM"] << 10
	}
}

// clients are the benchmark's clients of kube-apiserver, one rest config.
type clients struct {
	cfg *rest.Config
	rc  rest.Interface
	dc  dynamic.Interface
}

func newClients(kubeconfig string) (clients, error) {
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return clients{}, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return clients{}, err
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return clients{}, err
	}
	return clients{cfg: cfg, rc: cs.Discovery().RESTClient(), dc: dc}, nil
}

// runMeasure is `e2ebench measure`: the server settled, then each step in
// turn, then the report written.
func runMeasure(args []string) error {
	f := parseMeasureFlags(args)
	rep, err := startReport(f)
	if err != nil {
		return err
	}
	c, err := newClients(*f.kubeconfig)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if err := settle(f, rep); err != nil {
		return err
	}
	idx, err := measureServing(ctx, c, f, rep)
	if err != nil {
		return err
	}
	if rep.Server, err = localup.ServerResources(rep.serverPID, *f.local); err != nil {
		return err
	}
	if err := measureLast(ctx, c, f, idx, rep); err != nil {
		return err
	}
	rep.Decisions = report.Notes
	return report.Write(*f.out, rep.Report)
}

// startReport is the report with the machine described and the start-up read
// (readStartUp), marked at the start of the measurement.
func startReport(f *measureFlags) (*measured, error) {
	rep := &measured{Report: report.Report{Machine: map[string]string{}, LoadAvg: map[string]string{}, PeakRSSAt: map[string]int64{}}}
	for i, k := range f.machine.Keys {
		rep.Machine[k] = f.machine.Vals[i]
	}
	procfs.DescribeMachine(rep.Machine)
	rd, err := readStartUp(f, &rep.Report)
	if err != nil {
		return nil, err
	}
	rep.serverPID = rd.PID
	rep.mark("measure start")
	return rep, nil
}

// settle waits for the server and kube-apiserver to be quiet: right after the
// server turns ready, kube-apiserver fetches and merges its OpenAPI and
// discovery documents and the server returns its start-up garbage; on 2
// shared cores the first LISTs after start took 2-3 times as long as those a
// minute later.
func settle(f *measureFlags, rep *measured) error {
	settled, err := procfs.WaitQuiet([]int{rep.serverPID, localup.PIDFromFile(filepath.Join(*f.local, "run", "kube-apiserver.pid"))}, 0.25, 5*time.Second, 3*time.Minute)
	if err != nil {
		return err
	}
	rep.SettleSeconds = settled.Seconds()
	measure.Logf("settled: the server and kube-apiserver used < 0.25 core over 5 s, %.0f s after measuring began", settled.Seconds())
	return nil
}

// measureServing measures what the server serves as it runs, in order: LISTs,
// GETs, PolicyReach, the user's commands and gwctl, and policy edits.
func measureServing(ctx context.Context, c clients, f *measureFlags, rep *measured) (*measure.OutputIndex, error) {
	idx, err := measureLists(ctx, c.rc, *f.listReps, rep)
	if err != nil {
		return nil, err
	}
	runtime.GC()
	if err := measureGets(ctx, c.rc, f, idx, rep); err != nil {
		return nil, err
	}
	if err := measureReaches(ctx, c.rc, f, idx, rep); err != nil {
		return nil, err
	}
	if err := measureUserSide(ctx, c.rc, f, idx, rep); err != nil {
		return nil, err
	}
	if err := measureEdits(ctx, c.rc, c.dc, f, idx, rep); err != nil {
		return nil, err
	}
	return idx, nil
}

// measureLast measures, after the server's resources are read, RequestTrace
// and the review, then profiles the server: a trace of every Gateway
// allocates hundreds of MB (scale 1) and would move the peak RSS of the runs
// before RequestTrace existed; its own peak is reported with the trace.
func measureLast(ctx context.Context, c clients, f *measureFlags, idx *measure.OutputIndex, rep *measured) error {
	var err error
	if rep.Trace, err = trace.Measure(ctx, c.cfg, c.rc, c.dc, *f.kubeconfig, *f.pluginDir, *f.traceReps, rep.serverPID); err != nil {
		return err
	}
	rep.mark("after RequestTrace")
	gwPolicy, _ := idx.PickPolicies()
	if gwPolicy == nil {
		return fmt.Errorf("no Gateway-level policy to review")
	}
	epcs, err := versioned.NewForConfig(c.cfg)
	if err != nil {
		return err
	}
	if rep.Review, err = edits.Review(ctx, epcs.EffectivepolicyV1alpha1(), c.dc, gwPolicy, *f.reviewReps); err != nil {
		return err
	}
	rep.mark("after EffectivePolicyReview")
	return measure.ProfileHotPaths(ctx, c.rc, *f.local, *f.profileDir, idx.Names)
}

// readStartUp reads what `e2ebench load` and `e2ebench ready` wrote and the server's log
// into rep.
func readStartUp(f *measureFlags, rep *report.Report) (readyResult, error) {
	var rd readyResult
	if err := report.ReadJSON(*f.loadFile, &rep.Load); err != nil {
		return rd, fmt.Errorf("load result: %w", err)
	}
	if err := report.ReadJSON(*f.readyFile, &rd); err != nil {
		return rd, fmt.Errorf("ready result: %w", err)
	}
	sl, err := localup.ParseServerLog(filepath.Join(*f.local, "logs", "effectivepolicy-apiserver.log"))
	if err != nil {
		return rd, err
	}
	rep.StartUp = report.StartUp{
		ReadyzSeconds: rd.ReadyzSeconds, CPUSecondsAtReady: rd.CPUSecondsAtReady, InformersSyncedSeconds: sl.InformersSyncedSeconds,
		FirstComputationReady: sl.ReadySeconds, ReadyAfterSyncSeconds: sl.ReadySeconds - sl.InformersSyncedSeconds,
		EffectivePolicies: sl.EffectivePolicies, ClusterEffective: sl.ClusterEffective,
	}
	return rd, nil
}

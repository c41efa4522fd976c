package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/benchkit"
)

func newFlagSet(name string) *flag.FlagSet { return flag.NewFlagSet(name, flag.ExitOnError) }

const (
	epPath    = "/apis/effectivepolicy.dev/v1alpha1/effectivepolicies"
	routePath = "/apis/gateway.networking.k8s.io/v1/httproutes"
)

// Report is docs/benchmarks/e2e.json.
type Report struct {
	Machine map[string]string `json:"machine"`
	Load    loadResult        `json:"load"`
	StartUp startUp           `json:"startUp"`
	Get     latency           `json:"get"`
	// GetHTTPRoute is the same GET load on HTTPRoutes, which kube-apiserver
	// serves itself from its watch cache: the baseline of the machine, the
	// client and kube-apiserver, without the aggregator hop and our server.
	GetHTTPRoute latency      `json:"getHTTPRoute"`
	List         listResult   `json:"list"`
	Edits        []editResult `json:"edits"`
	Reach        reachResult  `json:"reach"`
	// ReachGateway: the same for the Gateway-level policy the edit and the
	// review use (issue #20: a Gateway-level policy's PolicyReach with
	// kubectl within 2× of kubectl get httproute).
	ReachGateway reachResult     `json:"reachGatewayPolicy"`
	UserCommands userCmdResult   `json:"userCommands"`
	Gwctl        gwctlResult     `json:"gwctl"`
	Trace        traceResult     `json:"trace"`
	Review       reviewResult    `json:"review"`
	Server       serverResources `json:"server"`
	// Restart is the server restarted on its warm cache after everything
	// else (`e2ebench restart`); nil until then.
	Restart *restartResult    `json:"restart,omitempty"`
	LoadAvg map[string]string `json:"loadAverage"`
	// PeakRSSAt is the server's VmHWM at the same points as LoadAvg: which
	// step set the peak.
	PeakRSSAt map[string]int64 `json:"peakRSSBytesAt,omitempty"`
	Targets   []target         `json:"targets"`
	Decisions []string         `json:"notes"`
	// SettleSeconds is how long the measurement waited for the server and
	// kube-apiserver to be quiet (waitQuiet).
	SettleSeconds float64 `json:"settleSeconds"`
	serverPID     int
}

// mark records the load average and the server's peak RSS after a step.
func (r *Report) mark(step string) {
	r.LoadAvg[step] = loadAvg()
	if r.serverPID == 0 {
		return
	}
	if st, err := procStatusKB(r.serverPID); err == nil {
		r.PeakRSSAt[step] = st["VmHWM"] << 10
	}
}

type startUp struct {
	ReadyzSeconds          float64 `json:"readyzSecondsFromProcessStart"`
	CPUSecondsAtReady      float64 `json:"serverCPUSecondsAtReady"`
	InformersSyncedSeconds float64 `json:"informersSyncedSeconds"`
	FirstComputationReady  float64 `json:"readySecondsFromLiveStart"`
	ReadyAfterSyncSeconds  float64 `json:"readySecondsAfterInformersSynced"`
	EffectivePolicies      int     `json:"effectivePolicies"`
	ClusterEffective       int     `json:"clusterEffectivePolicies"`
}

type latency struct {
	Requests    int     `json:"requests"`
	Concurrency int     `json:"concurrency"`
	Errors      int64   `json:"errors"`
	P50Ms       float64 `json:"p50Ms"`
	P90Ms       float64 `json:"p90Ms"`
	P99Ms       float64 `json:"p99Ms"`
	MaxMs       float64 `json:"maxMs"`
	MeanMs      float64 `json:"meanMs"`
	PerSecond   float64 `json:"requestsPerSecond"`
	AvgBytes    float64 `json:"avgBytes"`
	// CPU time per request of kube-apiserver and of the server over the
	// run (from /proc; 10 ms ticks over thousands of requests).
	KubeAPIServerCPUMs float64 `json:"kubeAPIServerCPUMsPerRequest,omitempty"`
	ServerCPUMs        float64 `json:"serverCPUMsPerRequest,omitempty"`
}

type listRun struct {
	Seconds        float64 `json:"seconds"`
	Bytes          int     `json:"bytes"`
	Objects        int     `json:"objects"`
	ObjectsPerSec  float64 `json:"objectsPerSecond"`
	BytesPerSecond float64 `json:"bytesPerSecond"`
}

type listResult struct {
	EffectivePolicies []listRun `json:"effectivePolicies"`
	HTTPRoutes        []listRun `json:"httpRoutes"`
	// Medians of the repetitions, and HTTPRoutes / EffectivePolicies (how
	// many times slower the EffectivePolicy LIST is).
	EPMedian           listRun `json:"effectivePoliciesMedian"`
	RouteMedian        listRun `json:"httpRoutesMedian"`
	ObjectsPerSecRatio float64 `json:"objectsPerSecondRatio"`
	BytesPerSecRatio   float64 `json:"bytesPerSecondRatio"`
}

type editResult struct {
	Name     string `json:"name"`
	Policy   string `json:"policy"`
	Attached string `json:"attachedTo"`
	// ListedReach: outputs naming the policy as an Enforced or
	// PartiallyEnforced source before the first edit; NamedBy: with any
	// outcome; Expected: outputs the warm-up edit changed (the expected set);
	// ListedNotReached: listed outputs the warm-up edit did not change.
	ListedReach      int       `json:"listedReach"`
	NamedBy          int       `json:"namedBy"`
	Expected         int       `json:"expectedOutputs"`
	ListedNotReached int       `json:"listedNotReached"`
	Reps             int       `json:"repetitions"`
	Complete         int       `json:"completeRepetitions"`
	Missing          int       `json:"missingEventsTotal"`
	Extra            int       `json:"extraEventsTotal"`
	LastMs           []float64 `json:"lastEventMs"`
	P50Ms            float64   `json:"p50Ms"`
	P99Ms            float64   `json:"p99Ms"`
	FirstP50         float64   `json:"firstEventP50Ms"`
	UpdateP50        float64   `json:"updateRequestP50Ms"`
}

type serverResources struct {
	PeakRSSBytes int64 `json:"peakRSSBytes"`
	EndRSSBytes  int64 `json:"endRSSBytes"`
	// What the RSS at the end is made of: the process's own memory, and
	// pages of mapped files (the bbolt cache, the binary), which the
	// kernel can drop and read again.
	EndRSSAnonBytes int64   `json:"endRSSAnonBytes"`
	EndRSSFileBytes int64   `json:"endRSSFileBytes"`
	CPUSeconds      float64 `json:"cpuSeconds"`
	Threads         int64   `json:"threads"`
	BboltBytes      int64   `json:"bboltFileBytes"`
	BboltFile       string  `json:"bboltFile"`
	ProcessUptime   float64 `json:"processUptimeSeconds"`
}

type target struct {
	Goal     string `json:"goal"`
	Measured string `json:"measured"`
	Met      bool   `json:"met"`
	// Record: measured and reported, not a goal (no verdict).
	Record bool `json:"forTheRecord,omitempty"`
}

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

func runMeasure(args []string) error {
	f := parseMeasureFlags(args)
	rep := Report{Machine: map[string]string{}, LoadAvg: map[string]string{}, PeakRSSAt: map[string]int64{}}
	for i, k := range f.machine.Keys {
		rep.Machine[k] = f.machine.Vals[i]
	}
	describeMachine(rep.Machine)
	rd, err := readStartUp(f, &rep)
	if err != nil {
		return err
	}
	rep.serverPID = rd.PID
	rep.mark("measure start")
	cfg, err := restConfig(*f.kubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	rc := cs.Discovery().RESTClient()
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx := context.Background()

	// Settle: right after the server turns ready, kube-apiserver fetches and
	// merges its OpenAPI and discovery documents and the server returns its
	// start-up garbage; on 2 shared cores the first LISTs after start took
	// 2-3 times as long as those a minute later. Measure once both
	// processes are quiet.
	settled, err := waitQuiet([]int{rd.PID, pidFromFile(filepath.Join(*f.local, "run", "kube-apiserver.pid"))}, 0.25, 5*time.Second, 3*time.Minute)
	if err != nil {
		return err
	}
	rep.SettleSeconds = settled.Seconds()
	logf("settled: the server and kube-apiserver used < 0.25 core over 5 s, %.0f s after measuring began", settled.Seconds())

	idx, err := measureLists(ctx, rc, *f.listReps, &rep)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := measureGets(ctx, rc, f, idx, &rep); err != nil {
		return err
	}
	if err := measureReaches(ctx, rc, f, idx, &rep); err != nil {
		return err
	}
	if err := measureUserSide(ctx, rc, f, idx, &rep); err != nil {
		return err
	}
	if err := measureEdits(ctx, rc, dc, f, idx, &rep); err != nil {
		return err
	}
	rep.Server, err = serverResourcesOf(rd.PID, *f.local)
	if err != nil {
		return err
	}
	// Last, after the server's resources are read: a trace of every
	// Gateway allocates hundreds of MB (scale 1) and would move the peak RSS
	// of the runs before RequestTrace existed; its own peak is reported with
	// the trace.
	if rep.Trace, err = measureTrace(ctx, cfg, rc, dc, *f.kubeconfig, *f.pluginDir, *f.traceReps, rd.PID); err != nil {
		return err
	}
	rep.mark("after RequestTrace")
	gwPolicy, _ := idx.pickPolicies()
	if gwPolicy == nil {
		return fmt.Errorf("no Gateway-level policy to review")
	}
	epcs, err := versioned.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if rep.Review, err = measureReview(ctx, epcs.EffectivepolicyV1alpha1(), dc, gwPolicy, *f.reviewReps); err != nil {
		return err
	}
	rep.mark("after EffectivePolicyReview")
	if err := profileHotPaths(ctx, rc, *f.local, *f.profileDir, idx.names); err != nil {
		return err
	}
	rep.Decisions = notes
	return writeReport(*f.out, rep)
}

// measureReaches times the PolicyReach of the most-reaching policy and of
// the Gateway-level policy the edits use.
func measureReaches(ctx context.Context, rc rest.Interface, f *measureFlags, idx *outputIndex, rep *Report) error {
	top, err := mostReaching(idx)
	if err != nil {
		return err
	}
	if rep.Reach, err = measureReach(ctx, rc, *f.kubeconfig, top, *f.reachReps, *f.seed); err != nil {
		return err
	}
	if gwPolicy, _ := idx.pickPolicies(); gwPolicy != nil {
		if rep.ReachGateway, err = measureReach(ctx, rc, *f.kubeconfig, gwPolicy, *f.reachReps, *f.seed); err != nil {
			return err
		}
	}
	rep.mark("after PolicyReach")
	return nil
}

// measureUserSide times the user's own kubectl commands and, when given,
// gwctl on the same route.
func measureUserSide(ctx context.Context, rc rest.Interface, f *measureFlags, idx *outputIndex, rep *Report) error {
	routes, err := routeNames(ctx, rc)
	if err != nil {
		return err
	}
	if rep.UserCommands, err = measureUserCommands(ctx, *f.kubeconfig, idx, routes, *f.userReps, *f.userListReps, *f.seed); err != nil {
		return err
	}
	rep.mark("after the user's commands")
	if *f.gwctl != "" {
		if rep.Gwctl, err = measureGwctl(ctx, *f.gwctl, *f.gwctlVersion, *f.kubeconfig, rep.UserCommands.Route, *f.gwctlReps); err != nil {
			return err
		}
		rep.mark("after gwctl")
	}
	return nil
}

// readStartUp reads what `e2ebench load` and `e2ebench ready` wrote and the server's log
// into rep.
func readStartUp(f *measureFlags, rep *Report) (readyResult, error) {
	var rd readyResult
	if err := readJSON(*f.loadFile, &rep.Load); err != nil {
		return rd, fmt.Errorf("load result: %w", err)
	}
	if err := readJSON(*f.readyFile, &rd); err != nil {
		return rd, fmt.Errorf("ready result: %w", err)
	}
	sl, err := parseServerLog(filepath.Join(*f.local, "logs", "effectivepolicy-apiserver.log"))
	if err != nil {
		return rd, err
	}
	rep.StartUp = startUp{
		ReadyzSeconds: rd.ReadyzSeconds, CPUSecondsAtReady: rd.CPUSecondsAtReady, InformersSyncedSeconds: sl.InformersSyncedSeconds,
		FirstComputationReady: sl.ReadySeconds, ReadyAfterSyncSeconds: sl.ReadySeconds - sl.InformersSyncedSeconds,
		EffectivePolicies: sl.EffectivePolicies, ClusterEffective: sl.ClusterEffective,
	}
	return rd, nil
}

// measureLists times LISTs, alternating the two resources so that both see the same load,
// and indexes the EffectivePolicies of the unmeasured first LIST.
func measureLists(ctx context.Context, rc rest.Interface, reps int, rep *Report) (*outputIndex, error) {
	logf("LIST: %d repetitions each of every EffectivePolicy and every HTTPRoute, after one unmeasured LIST of each", reps)
	// The warm-up: a fresh client process reading a 521 MB body first grows
	// its own heap (page faults, buffer doubling, garbage collection): its
	// first EffectivePolicy LIST took 6-11 s, the following ones 3-4 s,
	// against a 24 MB HTTPRoute LIST that hardly notices. Its body is the
	// one indexed.
	_, body, err := timedList(ctx, rc, epPath)
	if err != nil {
		return nil, err
	}
	epBody := append([]byte(nil), body...) // timedList reuses its buffer
	if _, _, err := timedList(ctx, rc, routePath); err != nil {
		return nil, err
	}
	for i := 0; i < reps; i++ {
		r, _, err := timedList(ctx, rc, epPath)
		if err != nil {
			return nil, err
		}
		rep.List.EffectivePolicies = append(rep.List.EffectivePolicies, r)
		r, _, err = timedList(ctx, rc, routePath)
		if err != nil {
			return nil, err
		}
		rep.List.HTTPRoutes = append(rep.List.HTTPRoutes, r)
		logf("  EffectivePolicies %.2f s (%d objects, %d MB); HTTPRoutes %.2f s (%d objects, %d MB)",
			rep.List.EffectivePolicies[i].Seconds, rep.List.EffectivePolicies[i].Objects, rep.List.EffectivePolicies[i].Bytes>>20,
			r.Seconds, r.Objects, r.Bytes>>20)
	}
	rep.List.EPMedian = medianRun(rep.List.EffectivePolicies)
	rep.List.RouteMedian = medianRun(rep.List.HTTPRoutes)
	rep.List.ObjectsPerSecRatio = rep.List.RouteMedian.ObjectsPerSec / rep.List.EPMedian.ObjectsPerSec
	rep.List.BytesPerSecRatio = rep.List.RouteMedian.BytesPerSecond / rep.List.EPMedian.BytesPerSecond
	rep.mark("after LIST")
	return indexOutputs(epBody)
}

// measureGets times single GETs of EffectivePolicies and, as the baseline, of HTTPRoutes.
func measureGets(ctx context.Context, rc rest.Interface, f *measureFlags, idx *outputIndex, rep *Report) error {
	kubePID := pidFromFile(filepath.Join(*f.local, "run", "kube-apiserver.pid"))
	serverPID := pidFromFile(filepath.Join(*f.local, "run", "effectivepolicy-apiserver.pid"))
	// timed runs getLatency and adds the CPU time per request both
	// processes spent meanwhile.
	timed := func(names []string, path func(string) string) (latency, error) {
		k0, _ := procCPUSeconds(kubePID)
		s0, _ := procCPUSeconds(serverPID)
		l, err := getLatency(ctx, rc, names, path, *f.gets, *f.conc, *f.seed)
		k1, err1 := procCPUSeconds(kubePID)
		s1, err2 := procCPUSeconds(serverPID)
		if err == nil && err1 == nil && err2 == nil && l.Requests > 0 {
			l.KubeAPIServerCPUMs = (k1 - k0) * 1000 / float64(l.Requests)
			l.ServerCPUMs = (s1 - s0) * 1000 / float64(l.Requests)
		}
		return l, err
	}
	var err error
	logf("GET: %d single EffectivePolicies, concurrency %d", *f.gets, *f.conc)
	if rep.Get, err = timed(idx.names, epGetPath); err != nil {
		return err
	}
	routes, err := routeNames(ctx, rc)
	if err != nil {
		return err
	}
	logf("GET: %d single HTTPRoutes (baseline), concurrency %d", *f.gets, *f.conc)
	if rep.GetHTTPRoute, err = timed(routes, routeGetPath); err != nil {
		return err
	}
	logf("  EffectivePolicies p50 %.1f ms p99 %.1f ms (%.0f/s; CPU per request: kube-apiserver %.2f ms, server %.2f ms); HTTPRoutes p50 %.1f ms p99 %.1f ms (%.0f/s; kube-apiserver %.2f ms)",
		rep.Get.P50Ms, rep.Get.P99Ms, rep.Get.PerSecond, rep.Get.KubeAPIServerCPUMs, rep.Get.ServerCPUMs,
		rep.GetHTTPRoute.P50Ms, rep.GetHTTPRoute.P99Ms, rep.GetHTTPRoute.PerSecond, rep.GetHTTPRoute.KubeAPIServerCPUMs)
	rep.mark("after GET")
	return nil
}

// measureEdits times policy edits to their last watch event: a Gateway-level policy (the
// median reach among them) and the policy whose reach is closest to 200 outputs.
func measureEdits(ctx context.Context, rc rest.Interface, dc dynamic.Interface, f *measureFlags, idx *outputIndex, rep *Report) error {
	gw, near := idx.pickPolicies()
	w, err := newWatcher(ctx, rc, idx.rv)
	if err != nil {
		return err
	}
	defer w.stop()
	for _, e := range []struct {
		name, field string
		p           *policyReach
	}{{"Gateway-level policy", "benchEditGateway", gw}, {"policy reaching ≥ 200 outputs", "benchEdit200", near}} {
		if e.p == nil {
			return fmt.Errorf("no %s in the outputs", e.name)
		}
		logf("edit: %s %s (attached to %s, %d outputs), %d times", e.name, e.p.id, e.p.attached, len(e.p.keys), *f.edits)
		r, err := runEdits(ctx, dc, w, e.name, e.field, e.p, *f.edits, *f.editTimeout)
		if err != nil {
			return err
		}
		logf("  p50 %.0f ms, p99 %.0f ms, %d/%d complete", r.P50Ms, r.P99Ms, r.Complete, r.Reps)
		rep.Edits = append(rep.Edits, r)
	}
	rep.mark("after edits")
	return nil
}

func logf(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "e2ebench: "+format+"\n", args...)
}

// listBuf is the body buffer of every timed LIST: one buffer, grown once.
// With a fresh 521 MB buffer per LIST (DoRaw), the client's own allocation,
// page faults and garbage collection made EffectivePolicy LISTs take
// anywhere from 3.5 to 12 s in one run, while kubectl (a fresh process
// each time) took 3.5-4 s every time.
var listBuf bytes.Buffer

// timedList times a LIST of path until its whole body has been read, and
// returns the body (valid until the next call).
func timedList(ctx context.Context, rc rest.Interface, path string) (listRun, []byte, error) {
	listBuf.Reset()
	t0 := time.Now()
	stream, err := rc.Get().AbsPath(path).SetHeader("Accept", "application/json").Stream(ctx)
	if err == nil {
		_, err = listBuf.ReadFrom(stream)
		_ = stream.Close()
	}
	d := time.Since(t0)
	if err != nil {
		return listRun{}, nil, fmt.Errorf("LIST %s: %w", path, err)
	}
	body := listBuf.Bytes()
	n, err := countItems(body)
	if err != nil {
		return listRun{}, nil, fmt.Errorf("LIST %s: %w", path, err)
	}
	return listRun{Seconds: d.Seconds(), Bytes: len(body), Objects: n,
		ObjectsPerSec: float64(n) / d.Seconds(), BytesPerSecond: float64(len(body)) / d.Seconds()}, body, nil
}

// countItems counts the items of a JSON list without decoding (or copying)
// them.
func countItems(body []byte) (int, error) {
	var l struct {
		Items []struct{} `json:"items"`
	}
	if err := json.Unmarshal(body, &l); err != nil {
		return 0, err
	}
	return len(l.Items), nil
}

func medianRun(rs []listRun) listRun {
	c := append([]listRun(nil), rs...)
	sort.Slice(c, func(i, j int) bool { return c[i].Seconds < c[j].Seconds })
	return c[len(c)/2]
}

func epGetPath(key string) string {
	ns, name, _ := strings.Cut(key, "/")
	return fmt.Sprintf("/apis/effectivepolicy.dev/v1alpha1/namespaces/%s/effectivepolicies/%s", ns, name)
}

func routeGetPath(key string) string {
	ns, name, _ := strings.Cut(key, "/")
	return fmt.Sprintf("/apis/gateway.networking.k8s.io/v1/namespaces/%s/httproutes/%s", ns, name)
}

// routeNames lists the namespace/name of every HTTPRoute.
func routeNames(ctx context.Context, rc rest.Interface) ([]string, error) {
	body, err := rc.Get().AbsPath(routePath).SetHeader("Accept", "application/json").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []struct {
			Metadata struct{ Namespace, Name string } `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(list.Items))
	for _, it := range list.Items {
		names = append(names, it.Metadata.Namespace+"/"+it.Metadata.Name)
	}
	sort.Strings(names)
	return names, nil
}

func getLatency(ctx context.Context, rc rest.Interface, names []string, path func(string) string, n, conc int, seed uint64) (latency, error) {
	if len(names) == 0 {
		return latency{}, fmt.Errorf("no objects to GET")
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	sample := make([]string, n+200)
	for i := range sample {
		sample[i] = names[rng.IntN(len(names))]
	}
	run := func(keys []string) ([]time.Duration, int64, int64, time.Duration) {
		var next, errs, bytesTotal atomic.Int64
		lat := make([]time.Duration, len(keys))
		var wg sync.WaitGroup
		t0 := time.Now()
		for w := 0; w < conc; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1)) - 1
					if i >= len(keys) {
						return
					}
					s := time.Now()
					body, err := rc.Get().AbsPath(path(keys[i])).SetHeader("Accept", "application/json").DoRaw(ctx)
					lat[i] = time.Since(s)
					if err != nil {
						errs.Add(1)
					}
					bytesTotal.Add(int64(len(body)))
				}
			}()
		}
		wg.Wait()
		return lat, errs.Load(), bytesTotal.Load(), time.Since(t0)
	}
	run(sample[:200]) // warm-up: connections, caches; not counted
	lat, errs, b, wall := run(sample[200:])
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return latency{
		Requests: len(lat), Concurrency: conc, Errors: errs,
		P50Ms: ms(pct(lat, 0.50)), P90Ms: ms(pct(lat, 0.90)), P99Ms: ms(pct(lat, 0.99)), MaxMs: ms(lat[len(lat)-1]),
		MeanMs: ms(sum / time.Duration(len(lat))), PerSecond: float64(len(lat)) / wall.Seconds(),
		AvgBytes: float64(b) / float64(len(lat)),
	}, nil
}

// pct is the nearest-rank percentile of sorted values.
func pct[T any](sorted []T, p float64) T {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

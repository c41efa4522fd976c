package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale"
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
	GetHTTPRoute latency           `json:"getHTTPRoute"`
	List         listResult        `json:"list"`
	Edits        []editResult      `json:"edits"`
	Server       serverResources   `json:"server"`
	LoadAvg      map[string]string `json:"loadAverage"`
	Targets      []target          `json:"targets"`
	Decisions    []string          `json:"notes"`
	// SettleSeconds is how long the measurement waited for the server and
	// kube-apiserver to be quiet (waitQuiet).
	SettleSeconds float64 `json:"settleSeconds"`
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
	PeakRSSBytes  int64   `json:"peakRSSBytes"`
	EndRSSBytes   int64   `json:"endRSSBytes"`
	CPUSeconds    float64 `json:"cpuSeconds"`
	Threads       int64   `json:"threads"`
	BboltBytes    int64   `json:"bboltFileBytes"`
	BboltFile     string  `json:"bboltFile"`
	ProcessUptime float64 `json:"processUptimeSeconds"`
}

type target struct {
	Goal     string `json:"goal"`
	Measured string `json:"measured"`
	Met      bool   `json:"met"`
}

type kvFlag struct{ keys, vals []string }

func (k *kvFlag) String() string { return strings.Join(k.keys, ",") }
func (k *kvFlag) Set(s string) error {
	key, val, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("want key=value, got %q", s)
	}
	k.keys, k.vals = append(k.keys, key), append(k.vals, val)
	return nil
}

// measureFlags are the flags of `e2ebench measure`.
type measureFlags struct {
	kubeconfig, local, loadFile, readyFile, out *string
	gets, conc, listReps, edits                 *int
	editTimeout                                 *time.Duration
	seed                                        *uint64
	machine                                     kvFlag
}

func parseMeasureFlags(args []string) *measureFlags {
	fs := newFlagSet("measure")
	f := &measureFlags{
		kubeconfig:  fs.String("kubeconfig", "", "admin kubeconfig of the control plane"),
		local:       fs.String("local", ".local", "local-up state directory"),
		loadFile:    fs.String("load", "", "JSON written by `e2ebench load`"),
		readyFile:   fs.String("ready", "", "JSON written by `e2ebench ready`"),
		out:         fs.String("o", "docs/benchmarks/e2e", "output path without extension (.md and .json)"),
		gets:        fs.Int("gets", 4000, "single GET requests"),
		conc:        fs.Int("concurrency", 16, "concurrent GETs"),
		listReps:    fs.Int("list-reps", 3, "LIST repetitions of each resource"),
		edits:       fs.Int("edits", 20, "repetitions of each policy edit"),
		editTimeout: fs.Duration("edit-timeout", 120*time.Second, "give up waiting for an edit's events after this long"),
		seed:        fs.Uint64("seed", 1, "seed of the GET sample"),
	}
	fs.Var(&f.machine, "machine", "key=value describing the machine or run (repeatable)")
	_ = fs.Parse(args)
	return f
}

func runMeasure(args []string) error {
	f := parseMeasureFlags(args)
	rep := Report{Machine: map[string]string{}, LoadAvg: map[string]string{}}
	for i, k := range f.machine.keys {
		rep.Machine[k] = f.machine.vals[i]
	}
	describeMachine(rep.Machine)
	rep.LoadAvg["measure start"] = loadAvg()
	rd, err := readStartUp(f, &rep)
	if err != nil {
		return err
	}
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
	if err := measureEdits(ctx, rc, dc, f, idx, &rep); err != nil {
		return err
	}
	rep.Server, err = serverResourcesOf(rd.PID, *f.local)
	if err != nil {
		return err
	}
	rep.Targets = targets(rep)
	rep.Decisions = notes
	if err := writeJSON(*f.out+".json", rep); err != nil {
		return err
	}
	return os.WriteFile(*f.out+".md", []byte(markdown(rep)), 0o644)
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
	rep.LoadAvg["after LIST"] = loadAvg()
	return indexOutputs(epBody)
}

// measureGets times single GETs of EffectivePolicies and, as the baseline, of HTTPRoutes.
func measureGets(ctx context.Context, rc rest.Interface, f *measureFlags, idx *outputIndex, rep *Report) error {
	var err error
	logf("GET: %d single EffectivePolicies, concurrency %d", *f.gets, *f.conc)
	rep.Get, err = getLatency(ctx, rc, idx.names, epGetPath, *f.gets, *f.conc, *f.seed)
	if err != nil {
		return err
	}
	routes, err := routeNames(ctx, rc)
	if err != nil {
		return err
	}
	logf("GET: %d single HTTPRoutes (baseline), concurrency %d", *f.gets, *f.conc)
	rep.GetHTTPRoute, err = getLatency(ctx, rc, routes, routeGetPath, *f.gets, *f.conc, *f.seed)
	if err != nil {
		return err
	}
	logf("  EffectivePolicies p50 %.1f ms p99 %.1f ms (%.0f/s); HTTPRoutes p50 %.1f ms p99 %.1f ms (%.0f/s)",
		rep.Get.P50Ms, rep.Get.P99Ms, rep.Get.PerSecond, rep.GetHTTPRoute.P50Ms, rep.GetHTTPRoute.P99Ms, rep.GetHTTPRoute.PerSecond)
	rep.LoadAvg["after GET"] = loadAvg()
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
	rep.LoadAvg["after edits"] = loadAvg()
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

// policyReach is one policy and the outputs that name it as a source whose
// values survive (Enforced or PartiallyEnforced): the outputs an edit of its
// spec must change.
type policyReach struct {
	id       string // Kind namespace/name
	kind     string
	ns, name string
	attached string // Kind/name[/section] of one attachment point
	gateway  bool   // attached to a whole Gateway
	keys     map[string]bool
	named    int // outputs naming it as a source, any outcome
	namedSet map[string]bool
}

type outputIndex struct {
	rv       string
	names    []string // namespace/name of every EffectivePolicy
	policies map[string]*policyReach
}

func indexOutputs(body []byte) (*outputIndex, error) {
	var l struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []struct {
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
			Targets []struct {
				Policies []struct {
					Kind    string `json:"kind"`
					Sources []struct {
						Namespace  string `json:"namespace"`
						Name       string `json:"name"`
						Outcome    string `json:"outcome"`
						AttachedTo struct {
							Kind        string `json:"kind"`
							Name        string `json:"name"`
							SectionName string `json:"sectionName"`
						} `json:"attachedTo"`
					} `json:"sources"`
				} `json:"policies"`
			} `json:"targets"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, err
	}
	idx := &outputIndex{rv: l.Metadata.ResourceVersion, policies: map[string]*policyReach{}}
	for _, it := range l.Items {
		key := it.Metadata.Namespace + "/" + it.Metadata.Name
		idx.names = append(idx.names, key)
		for _, t := range it.Targets {
			for _, p := range t.Policies {
				for _, s := range p.Sources {
					id := p.Kind + " " + s.Namespace + "/" + s.Name
					pr := idx.policies[id]
					if pr == nil {
						a := s.AttachedTo.Kind + "/" + s.AttachedTo.Name
						if s.AttachedTo.SectionName != "" {
							a += "/" + s.AttachedTo.SectionName
						}
						pr = &policyReach{id: id, kind: p.Kind, ns: s.Namespace, name: s.Name, attached: a,
							gateway: s.AttachedTo.Kind == "Gateway" && s.AttachedTo.SectionName == "",
							keys:    map[string]bool{}, namedSet: map[string]bool{}}
						idx.policies[id] = pr
					}
					pr.namedSet[key] = true
					if s.Outcome == "Enforced" || s.Outcome == "PartiallyEnforced" {
						pr.keys[key] = true
					}
				}
			}
		}
	}
	for _, pr := range idx.policies {
		pr.named, pr.namedSet = len(pr.namedSet), nil
	}
	sort.Strings(idx.names)
	return idx, nil
}

// pickPolicies: the Gateway-level policy of median reach, and the policy
// (any level) of the smallest reach of at least 200 outputs. Ties by id, so the
// choice is reproducible for a given topology.
func (idx *outputIndex) pickPolicies() (gw, near *policyReach) {
	var all, gws []*policyReach
	for _, p := range idx.policies {
		all = append(all, p)
		if p.gateway {
			gws = append(gws, p)
		}
	}
	byReach := func(s []*policyReach) {
		sort.Slice(s, func(i, j int) bool {
			if len(s[i].keys) != len(s[j].keys) {
				return len(s[i].keys) < len(s[j].keys)
			}
			return s[i].id < s[j].id
		})
	}
	byReach(gws)
	if len(gws) > 0 {
		gw = gws[len(gws)/2]
	}
	// The smallest reach of at least 200 (so the target is not met by a
	// smaller edit); the largest when none reaches 200.
	byReach(all)
	for _, p := range all {
		if len(p.keys) >= 200 {
			return gw, p
		}
	}
	if len(all) > 0 {
		near = all[len(all)-1]
	}
	return gw, near
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

// watcher keeps one watch on every EffectivePolicy open (reopening it from
// the last resourceVersion if the server closes it) and reports the outputs
// whose JSON contains the current edit's marker.
type watcher struct {
	marker atomic.Pointer[string]
	hits   chan hit
	cancel context.CancelFunc
	done   chan struct{}
}

type hit struct {
	key string
	at  time.Time
}

// watchEvent is the part of a watch event the watcher reads.
type watchEvent struct {
	Type   string `json:"type"`
	Object struct {
		Metadata struct {
			Name            string `json:"name"`
			Namespace       string `json:"namespace"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	} `json:"object"`
}

// newWatcher watches every EffectivePolicy from rv, reading the raw stream:
// an event has arrived when its line has been read, and it carries the
// marker when its bytes contain it. What a client does with an event after it
// arrives (decode it into a typed object, ~0.2 ms for 13 KB; into
// unstructured maps, several times that) is the client's cost, not the
// server's delivery; decoding every event into unstructured maps first, as
// the dynamic client does, had made the last of 413 events wait ~0.3 s
// behind the client's own work on these 2 cores.
func newWatcher(ctx context.Context, rc rest.Interface, rv string) (*watcher, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &watcher{hits: make(chan hit, 100000), cancel: cancel, done: make(chan struct{})}
	empty := ""
	w.marker.Store(&empty)
	open := func(rv string) (io.ReadCloser, error) {
		return rc.Get().AbsPath(epPath).Param("watch", "true").Param("resourceVersion", rv).
			Param("allowWatchBookmarks", "true").SetHeader("Accept", "application/json").Stream(ctx)
	}
	body, err := open(rv)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("watch effectivepolicies from %s: %w", rv, err)
	}
	go func() {
		defer close(w.done)
		for {
			br := bufio.NewReaderSize(body, 1<<20)
			for {
				line, err := br.ReadBytes('\n')
				if err != nil {
					break
				}
				now := time.Now()
				var ev watchEvent
				if json.Unmarshal(line, &ev) != nil {
					continue
				}
				if ev.Object.Metadata.ResourceVersion != "" {
					rv = ev.Object.Metadata.ResourceVersion
				}
				m := *w.marker.Load()
				if m == "" || (ev.Type != string(watch.Modified) && ev.Type != string(watch.Added)) {
					continue
				}
				if bytes.Contains(line, []byte(m)) {
					w.hits <- hit{key: ev.Object.Metadata.Namespace + "/" + ev.Object.Metadata.Name, at: now}
				}
			}
			_ = body.Close()
			if ctx.Err() != nil {
				return
			}
			for {
				body, err = open(rv)
				if err == nil {
					break
				}
				if ctx.Err() != nil {
					return
				}
				logf("re-opening the watch from %s: %v", rv, err)
				time.Sleep(time.Second)
			}
		}
	}()
	return w, nil
}

func (w *watcher) stop() { w.cancel(); <-w.done }

func runEdits(ctx context.Context, dc dynamic.Interface, w *watcher, name, field string, p *policyReach, reps int, timeout time.Duration) (editResult, error) {
	res := editResult{Name: name, Policy: p.id, Attached: p.attached, ListedReach: len(p.keys), NamedBy: p.named, Reps: reps}
	var plural string
	for _, k := range scale.PolicyKinds {
		if k.Kind == p.kind {
			plural = k.Plural
		}
	}
	if plural == "" {
		return res, fmt.Errorf("unknown policy kind %s", p.kind)
	}
	ri := dc.Resource(schema.GroupVersionResource{Group: scale.PolicyGroup, Version: "v1", Resource: plural}).Namespace(p.ns)
	edit := func(i int) (time.Time, error) {
		marker := fmt.Sprintf("e2ebench-%d-%d", time.Now().UnixNano(), i)
		obj, err := ri.Get(ctx, p.name, metav1.GetOptions{})
		if err != nil {
			return time.Time{}, err
		}
		setMarker(obj, field, marker)
		for len(w.hits) > 0 { // stale hits of the previous edit
			<-w.hits
		}
		w.marker.Store(&marker)
		t0 := time.Now()
		_, err = ri.Update(ctx, obj, metav1.UpdateOptions{})
		return t0, err
	}

	// Warm-up edit, not measured: it adds the marker field, which can also
	// change outputs where the policy was Overridden before (a new field that
	// no other policy sets survives a patch merge). The outputs it reaches,
	// collected until the watch is quiet for 5 s, are the expected set of the
	// measured edits, which only change the field's value.
	if _, err := edit(-1); err != nil {
		return res, err
	}
	expected := collectHits(w, timeout)
	res.Expected = len(expected)
	for k := range p.keys {
		if !expected[k] {
			res.ListedNotReached++
		}
	}
	if len(expected) == 0 {
		return res, fmt.Errorf("the warm-up edit of %s reached no output", p.id)
	}

	var firsts, updates []float64
	for i := 0; i < reps; i++ {
		t0, err := edit(i)
		if err != nil {
			return res, err
		}
		updates = append(updates, msSince(t0, time.Now()))
		seen, first, last, extra := awaitHits(w, expected, timeout)
		res.Extra += extra
		if seen == len(expected) {
			res.Complete++
			res.LastMs = append(res.LastMs, msSince(t0, last))
			firsts = append(firsts, msSince(t0, first))
		} else {
			res.Missing += len(expected) - seen
			logf("  edit %d: %d of %d expected events after %s", i, seen, len(expected), timeout)
		}
		// Let stragglers arrive before the next edit starts.
		time.Sleep(300 * time.Millisecond)
	}
	empty := ""
	w.marker.Store(&empty)
	if len(res.LastMs) > 0 {
		s := append([]float64(nil), res.LastMs...)
		sort.Float64s(s)
		res.P50Ms, res.P99Ms = pct(s, 0.5), pct(s, 0.99)
		sort.Float64s(firsts)
		res.FirstP50 = pct(firsts, 0.5)
	}
	sort.Float64s(updates)
	res.UpdateP50 = pct(updates, 0.5)
	return res, nil
}

// collectHits gathers the outputs an edit reaches until the watch is quiet for 5 s (or
// timeout passes).
func collectHits(w *watcher, timeout time.Duration) map[string]bool {
	expected := map[string]bool{}
	quiet := time.NewTimer(5 * time.Second)
	deadline := time.After(timeout)
	for {
		select {
		case h := <-w.hits:
			expected[h.key] = true
			quiet.Reset(5 * time.Second)
		case <-quiet.C:
			return expected
		case <-deadline:
			return expected
		}
	}
}

// awaitHits waits until every expected output has had an event of the current edit, or
// timeout: how many did, when the first event of any output and the last expected one came,
// and how many events came for outputs not expected.
func awaitHits(w *watcher, expected map[string]bool, timeout time.Duration) (seen int, first, last time.Time, extra int) {
	got := map[string]bool{}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for len(got) < len(expected) {
		select {
		case h := <-w.hits:
			if first.IsZero() {
				first = h.at
			}
			if !expected[h.key] {
				extra++
				continue
			}
			if !got[h.key] {
				got[h.key] = true
				last = h.at
			}
		case <-timer.C:
			return len(got), first, last, extra
		}
	}
	return len(got), first, last, extra
}

func msSince(t0, t time.Time) float64 { return float64(t.Sub(t0).Microseconds()) / 1000 }

// setMarker writes a field no other policy sets into every stanza of the
// policy (defaults and overrides, or the implicit top level), so that every
// output in which the policy's values survive changes.
func setMarker(obj *unstructured.Unstructured, field, marker string) {
	spec, _ := obj.Object["spec"].(map[string]interface{})
	if spec == nil {
		spec = map[string]interface{}{}
		obj.Object["spec"] = spec
	}
	stanza := false
	for _, s := range []string{"defaults", "overrides"} {
		if m, ok := spec[s].(map[string]interface{}); ok {
			m[field] = marker
			stanza = true
		}
	}
	if !stanza {
		spec[field] = marker
	}
}

func serverResourcesOf(pid int, local string) (serverResources, error) {
	var r serverResources
	st, err := procStatusKB(pid)
	if err != nil {
		return r, fmt.Errorf("server process %d: %w", pid, err)
	}
	r.PeakRSSBytes, r.EndRSSBytes = st["VmHWM"]<<10, st["VmRSS"]<<10
	if r.CPUSeconds, err = procCPUSeconds(pid); err != nil {
		return r, err
	}
	if f, err := procStatFields(pid); err == nil {
		if _, err := fmt.Sscan(f[19], &r.Threads); err != nil {
			return r, fmt.Errorf("threads of process %d: %w", pid, err)
		}
	}
	if started, err := processStart(pid); err == nil {
		r.ProcessUptime = time.Since(started).Seconds()
	}
	r.BboltFile = filepath.Join(local, "cache", "effectivepolicy.db")
	fi, err := os.Stat(r.BboltFile)
	r.BboltFile = "<cache-dir>/effectivepolicy.db"
	if err != nil {
		return r, err
	}
	r.BboltBytes = fi.Size()
	return r, nil
}

func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(data))[:3], " ")
}

func describeMachine(m map[string]string) {
	set := func(k, v string) {
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				set("CPU", strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":")))
				break
			}
		}
	}
	set("cores", fmt.Sprint(runtime.NumCPU()))
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
				var kb float64
				if _, err := fmt.Sscan(v, &kb); err == nil {
					set("memory", fmt.Sprintf("%.1f GiB", kb/(1<<20)))
				}
			}
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		set("kernel", strings.TrimSpace(string(data)))
	}
	set("Go", runtime.Version())
}

// pidFromFile reads a pid file (0 when it cannot).
func pidFromFile(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}

// waitQuiet waits until every process of pids (0s are skipped) used less
// than maxCores of CPU over window, and returns how long that took; after
// timeout it gives up waiting and measures anyway.
func waitQuiet(pids []int, maxCores float64, window, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	cpu := func() []float64 {
		out := make([]float64, len(pids))
		for i, pid := range pids {
			if pid > 0 {
				out[i], _ = procCPUSeconds(pid)
			}
		}
		return out
	}
	for {
		before := cpu()
		time.Sleep(window)
		after := cpu()
		quiet := true
		for i := range pids {
			if (after[i]-before[i])/window.Seconds() >= maxCores {
				quiet = false
			}
		}
		if quiet || time.Since(start) > timeout {
			return time.Since(start), nil
		}
	}
}

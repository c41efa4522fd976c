// Package report is the end-to-end benchmark's report, docs/benchmarks/e2e.json
// and e2e.md: the results of every step as the JSON holds them, the verdicts
// the targets draw from them, and the markdown written from the JSON. The
// measuring packages fill it in; `e2ebench render` writes the markdown again
// from the JSON alone, so the markdown depends on nothing but this package.
package report

import (
	"encoding/json"
	"os"
)

// Report is docs/benchmarks/e2e.json.
type Report struct {
	Machine map[string]string `json:"machine"`
	Load    LoadResult        `json:"load"`
	StartUp StartUp           `json:"startUp"`
	Get     Latency           `json:"get"`
	// GetHTTPRoute is the same GET load on HTTPRoutes, which kube-apiserver
	// serves itself from its watch cache: the baseline of the machine, the
	// client and kube-apiserver, without the aggregator hop and our server.
	GetHTTPRoute Latency      `json:"getHTTPRoute"`
	List         ListResult   `json:"list"`
	Edits        []EditResult `json:"edits"`
	Reach        ReachResult  `json:"reach"`
	// ReachGateway: the same for the Gateway-level policy the edit and the
	// review use (its goal: a Gateway-level policy's PolicyReach with
	// kubectl within 2× of kubectl get httproute).
	ReachGateway ReachResult     `json:"reachGatewayPolicy"`
	UserCommands UserCmdResult   `json:"userCommands"`
	Gwctl        GwctlResult     `json:"gwctl"`
	Trace        TraceResult     `json:"trace"`
	Review       ReviewResult    `json:"review"`
	Server       ServerResources `json:"server"`
	// Restart is the server restarted on its warm cache after everything
	// else (`e2ebench restart`); nil until then.
	Restart *RestartResult    `json:"restart,omitempty"`
	LoadAvg map[string]string `json:"loadAverage"`
	// PeakRSSAt is the server's VmHWM at the same points as LoadAvg: which
	// step set the peak.
	PeakRSSAt map[string]int64 `json:"peakRSSBytesAt,omitempty"`
	Targets   []Target         `json:"targets"`
	Decisions []string         `json:"notes"`
	// SettleSeconds is how long the measurement waited for the server and
	// kube-apiserver to be quiet (procfs.WaitQuiet).
	SettleSeconds float64 `json:"settleSeconds"`
}

// StartUp is how long the server took to start and be ready.
type StartUp struct {
	ReadyzSeconds          float64 `json:"readyzSecondsFromProcessStart"`
	CPUSecondsAtReady      float64 `json:"serverCPUSecondsAtReady"`
	InformersSyncedSeconds float64 `json:"informersSyncedSeconds"`
	FirstComputationReady  float64 `json:"readySecondsFromLiveStart"`
	ReadyAfterSyncSeconds  float64 `json:"readySecondsAfterInformersSynced"`
	EffectivePolicies      int     `json:"effectivePolicies"`
	ClusterEffective       int     `json:"clusterEffectivePolicies"`
}

// Latency is a run of single GETs.
type Latency struct {
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

// ListRun is one timed LIST.
type ListRun struct {
	Seconds        float64 `json:"seconds"`
	Bytes          int     `json:"bytes"`
	Objects        int     `json:"objects"`
	ObjectsPerSec  float64 `json:"objectsPerSecond"`
	BytesPerSecond float64 `json:"bytesPerSecond"`
}

// ListResult is the LISTs of every EffectivePolicy and every HTTPRoute.
type ListResult struct {
	EffectivePolicies []ListRun `json:"effectivePolicies"`
	HTTPRoutes        []ListRun `json:"httpRoutes"`
	// Medians of the repetitions, and HTTPRoutes / EffectivePolicies (how
	// many times slower the EffectivePolicy LIST is).
	EPMedian           ListRun `json:"effectivePoliciesMedian"`
	RouteMedian        ListRun `json:"httpRoutesMedian"`
	ObjectsPerSecRatio float64 `json:"objectsPerSecondRatio"`
	BytesPerSecRatio   float64 `json:"bytesPerSecondRatio"`
}

// EditResult is the edits of one policy, each timed to its last watch event.
type EditResult struct {
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

// ServerResources is what the server process used, read from /proc.
type ServerResources struct {
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

// Target is one goal and its verdict.
type Target struct {
	Goal     string `json:"goal"`
	Measured string `json:"measured"`
	Met      bool   `json:"met"`
	// Record: measured and reported, not a goal (no verdict).
	Record bool `json:"forTheRecord,omitempty"`
}

// LoadResult is what `e2ebench load` writes for `e2ebench measure`.
type LoadResult struct {
	Scale        float64        `json:"scale"`
	Seed         uint64         `json:"seed"`
	Objects      int            `json:"objects"`
	Counts       map[string]int `json:"counts"`
	CRDSeconds   float64        `json:"crdSeconds"`
	TotalSeconds float64        `json:"totalSeconds"`
	ObjectsPerS  float64        `json:"objectsPerSecond"`
	Workers      int            `json:"workers"`
	Retries      int64          `json:"retries"`
}

// Write writes r as <out>.json and <out>.md, its verdicts taken from
// its measured numbers by the current targets.
func Write(out string, r Report) error {
	r.Targets = targets(r)
	if err := WriteJSON(out+".json", r); err != nil {
		return err
	}
	return os.WriteFile(out+".md", []byte(markdown(r)), 0o644)
}

// WriteJSON writes v as indented JSON to path, or to standard output when
// path is empty or "-".
func WriteJSON(path string, v interface{}) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if path == "" || path == "-" {
		_, err = os.Stdout.Write(data)
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// ReadJSON reads the JSON of path into v.
func ReadJSON(path string, v interface{}) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

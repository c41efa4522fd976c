package report

// The results of the steps that time a feature or a user's command against
// its baseline.

// ReachResult is the PolicyReach of the most-reaching policy (the goal:
// within 2× of `kubectl get httproute X -o yaml`), timed three ways,
// interleaved: the user's command, the baseline, and the bare GET through
// kube-apiserver.
type ReachResult struct {
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

// UserCmdResult is the commands a user types, each a fresh kubectl process,
// against the same command for the HTTPRoutes kube-apiserver serves itself,
// interleaved (the goals: `kubectl get effectivepolicy R -o yaml` within
// 1.25× of `kubectl get httproute R -o yaml`; `kubectl get effectivepolicies
// -A` within 1.5× of `kubectl get httproutes -A`).
type UserCmdResult struct {
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
	KubectlChunk = 500
	KubectlBurst = 10
	KubectlQPS   = 5.0
)

// GwctlResult is gwctl (kubernetes-sigs/gwctl, built from its Go module at a
// pinned version by hack/bench-e2e.sh), the Gateway API project's own tool
// for "which policies affect this route", answering `gwctl describe
// httproute R -n NS` on the loaded cluster, against `kubectl get
// effectivepolicy R -n NS -o yaml` for the same route (the anchor of the goals:
// ≥ 100× at scale 1). gwctl reads the cluster's Gateway API objects and
// policies on every run and computes in the client.
type GwctlResult struct {
	Version string    `json:"version"`
	Route   string    `json:"route"`
	Reps    int       `json:"reps"`
	Gwctl   []float64 `json:"gwctlDescribeHTTPRouteSeconds"`
	Ours    []float64 `json:"kubectlGetEffectivePolicyYAMLSeconds"`
	// Medians; Ratio is gwctl's ÷ ours (how many times faster we answer).
	GwctlMedian, OursMedian, Ratio float64
	// Failed holds gwctl's error output when it could not answer.
	Failed string `json:"failed,omitempty"`
}

// TraceResult is a RequestTrace against the Gateway that the most
// HTTPRoutes name in their parentRefs, timed against a GET of the traced
// route, interleaved, with the same client configuration.
type TraceResult struct {
	Gateway string `json:"gateway"`
	// RoutesNamingIt: distinct HTTPRoutes with a parentRef to the Gateway.
	RoutesNamingIt int    `json:"routesNamingIt"`
	Route          string `json:"route"`
	Host           string `json:"host"`
	Path           string `json:"path"`
	// Matches: the trace's matches (one per listener taking the host);
	// ResponseBytes: its answer as JSON.
	Matches       int       `json:"matches"`
	ResponseBytes int       `json:"responseBytes"`
	Reps          int       `json:"reps"`
	TraceMs       []float64 `json:"traceMs"`
	GetMs         []float64 `json:"getHTTPRouteMs"`
	TraceP50      float64   `json:"traceP50Ms"`
	TraceP90      float64   `json:"traceP90Ms"`
	GetP50        float64   `json:"getHTTPRouteP50Ms"`
	GetP90        float64   `json:"getHTTPRouteP90Ms"`
	// RatioP50, RatioP90: trace ÷ GET at each percentile.
	RatioP50 float64 `json:"ratioP50"`
	RatioP90 float64 `json:"ratioP90"`
	// Port: the port of the listener the route is matched on; the same
	// trace limited to it (spec.port set, one match) is timed in the same
	// loop, interleaved: a request arrives on one port, and a trace of every
	// port answers once per listener taking the host.
	Port              int32     `json:"port"`
	PortMatches       int       `json:"portMatches"`
	PortResponseBytes int       `json:"portResponseBytes"`
	PortTraceMs       []float64 `json:"portTraceMs"`
	PortTraceP50      float64   `json:"portTraceP50Ms"`
	PortTraceP90      float64   `json:"portTraceP90Ms"`
	PortRatioP50      float64   `json:"portRatioP50"`
	PortRatioP90      float64   `json:"portRatioP90"`
	// ServerCPUMsPerTrace: the server process's CPU time (user + system)
	// over the repetitions, per trace (the GETs of HTTPRoutes do not reach
	// it): what the trace costs the server, whatever the machine's load.
	ServerCPUMsPerTrace float64 `json:"serverCPUMsPerTrace"`
	// AllGatewaysMs: one trace of the same request with spec.gateway unset
	// (every Gateway), after an unmeasured one; AllGatewaysServerCPUMs the
	// server's CPU time over both.
	AllGatewaysMs          float64 `json:"allGatewaysMs"`
	AllGatewaysServerCPUMs float64 `json:"allGatewaysServerCPUMsPerTrace"`
	// ServerPeakRSSBytes: the server's VmHWM after the traces (the report's
	// server resources are read before them).
	ServerPeakRSSBytes int64 `json:"serverPeakRSSBytesAfter"`
	// The user's commands, each a fresh kubectl process (start, discovery
	// from its cache, the request, YAML printing), KubectlReps interleaved
	// runs after an unmeasured one; medians. Creating with validation also
	// fetches the group's OpenAPI schema through kube-apiserver.
	KubectlReps               int     `json:"kubectlReps"`
	KubectlGetMs              float64 `json:"kubectlGetHTTPRouteYAMLMs"`
	KubectlCreateMs           float64 `json:"kubectlCreateTraceYAMLMs"`
	KubectlCreateNoValidateMs float64 `json:"kubectlCreateTraceYAMLNoValidateMs"`
	KubectlRatio              float64 `json:"kubectlRatio"`
	// KubectlSSAR*: `kubectl create -f ssar.yaml -o yaml` of a
	// SelfSubjectAccessReview, with and without kubectl's validation.
	KubectlSSARMs           float64 `json:"kubectlCreateSelfSubjectAccessReviewYAMLMs,omitempty"`
	KubectlSSARNoValidateMs float64 `json:"kubectlCreateSelfSubjectAccessReviewYAMLNoValidateMs,omitempty"`
	// KubectlPluginMs: `kubectl effectivepolicy trace` (this project's
	// plugin, its tree output) for the same request; 0 when the plugin was
	// not given (-plugin-dir).
	KubectlPluginMs float64 `json:"kubectlPluginTraceMs"`
}

// ReviewResult is a review of an edit of the Gateway-level policy of
// median reach (the one the edit measurement changes), created Reps times.
type ReviewResult struct {
	Policy string `json:"policy"`
	// Changes: the EffectivePolicies the review says would change;
	// ResponseBytes: its answer as JSON.
	Changes       int       `json:"changes"`
	ResponseBytes int       `json:"responseBytes"`
	Reps          int       `json:"reps"`
	Ms            []float64 `json:"ms"`
	P50           float64   `json:"p50Ms"`
	Max           float64   `json:"maxMs"`
}

// RestartResult is the server restarted on the cache the measured run left
// behind: how soon after its process started it served an EffectivePolicy
// it had before, on its own port and through kube-apiserver.
type RestartResult struct {
	// Object is the EffectivePolicy fetched (namespace/name) and its
	// resourceVersion before the restart.
	Object          string `json:"object"`
	ResourceVersion string `json:"resourceVersionBefore"`
	// Seconds from the new process's start (/proc) until the first 200 of a
	// GET of Object on the server's own port (admin client certificate),
	// through kube-apiserver's aggregator (admin kubeconfig), and of the
	// server's /readyz; each polled every 20 ms.
	DirectSeconds     float64 `json:"directGETSeconds"`
	AggregatedSeconds float64 `json:"aggregatedGETSeconds"`
	ReadyzSeconds     float64 `json:"readyzSeconds"`
	// SameResourceVersion: the first GETs answered with the resourceVersion
	// served before the restart (the restored output, not a new one).
	DirectSameRV     bool `json:"directSameResourceVersion"`
	AggregatedSameRV bool `json:"aggregatedSameResourceVersion"`
	// Restored is what the server logged restoring ("Restored outputs from
	// cache" lines), empty if it restored nothing.
	Restored []string `json:"restoredLog"`
}

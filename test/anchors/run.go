package anchors

import (
	"context"
	"errors"
	"runtime"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/benchkit"
)

// Sides of the comparison.
const (
	SideOurs = "ours"
	SidePM   = "policy-machinery"
)

// Kinds are the generated policy kinds, each computed by policy-machinery
// on its own as kuadrant-operator's one-reconciler-per-kind does.
func Kinds() []string {
	var out []string
	for _, k := range scale.PolicyKinds {
		out = append(out, k.Kind)
	}
	return out
}

// Topology is what scale.Generate produced, counted from the objects.
type Topology struct {
	Scale      float64 `json:"scale"`
	Seed       uint64  `json:"seed"`
	Objects    int     `json:"objects"`
	Routes     int     `json:"httpRoutes"` // routes under Gateways
	MeshRoutes int     `json:"meshRoutes"` // routes under a Service
	Rules      int     `json:"routeRules"`
	Gateways   int     `json:"gateways"`
	Listeners  int     `json:"listeners"`
	Services   int     `json:"services"`
	Policies   int     `json:"policies"`
	// PoliciesAt counts the policies per attachment level.
	PoliciesAt map[string]int `json:"policiesAt"`
}

// CountTopology counts the generated objects.
func CountTopology(o scale.Options, objs []*unstructured.Unstructured) Topology {
	c := scale.Count(objs)
	t := Topology{
		Scale: o.Scale, Seed: o.Seed, Objects: len(objs),
		Routes: c["HTTPRoute"] - c["meshRoutes"], MeshRoutes: c["meshRoutes"], Rules: c["rules"],
		Gateways: c["Gateway"], Listeners: c["listeners"], Services: c["Service"], Policies: c["policies"],
		PoliciesAt: map[string]int{},
	}
	for _, l := range []string{scale.LevelGatewayClass, scale.LevelNamespace, scale.LevelGateway, scale.LevelListener,
		scale.LevelRoute, scale.LevelRule, scale.LevelService, scale.LevelPort} {
		t.PoliciesAt[l] = c["policies/"+l]
	}
	return t
}

// Phase is one timed part of a run.
type Phase struct {
	Name string  `json:"name"`
	Wall float64 `json:"wallSeconds"`
	CPU  float64 `json:"cpuSeconds"`
}

// Result is one side's run at one scale.
type Result struct {
	Side     string   `json:"side"`
	Topology Topology `json:"topology"`
	// Wall and CPU time of the computation (the phases marked as measured;
	// policy-machinery's conversion of the inputs is reported apart).
	WallSeconds float64 `json:"wallSeconds"`
	CPUSeconds  float64 `json:"cpuSeconds"`
	Phases      []Phase `json:"phases"`
	// InputMiB is the heap the inputs hold after GC: the unstructured
	// objects for ours, the typed objects for policy-machinery (what each
	// one's informer caches would hold). PeakHeapMiB is the peak heap during
	// the computation minus InputMiB.
	InputMiB    float64 `json:"inputMiB"`
	PeakHeapMiB float64 `json:"peakHeapMiB"`
	KeptHeapMiB float64 `json:"keptHeapMiB"` // after the computation and GC, outputs kept, minus InputMiB
	PeakRSSMiB  float64 `json:"peakRSSMiB"`
	// Outputs counts what the side computed (keys, targets, contexts for
	// ours; effective policies, paths for policy-machinery).
	Outputs    map[string]int `json:"outputs"`
	Finished   bool           `json:"finished"`
	Done       float64        `json:"done"` // fraction of the work done (1 when finished)
	GOMAXPROCS int            `json:"gomaxprocs"`
	Error      string         `json:"error,omitempty"`
}

func mib(v uint64) float64 { return float64(v) / (1 << 20) }

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

// RunOurs generates the topology and measures ComputeOurs on it.
func RunOurs(o scale.Options) Result {
	objs := scale.Generate(o)
	r := Result{Side: SideOurs, Topology: CountTopology(o, objs), GOMAXPROCS: runtime.GOMAXPROCS(0), Outputs: map[string]int{}}
	inputs := benchkit.HeapAfterGC()
	sampler := benchkit.StartHeapSampler(2 * time.Millisecond)
	span := StartSpan()
	keys, outs, err := ComputeOurs(objs)
	r.WallSeconds, r.CPUSeconds = span.End()
	peak, _ := sampler.Stop()
	r.Phases = []Phase{{Name: "feed + compute every key", Wall: r.WallSeconds, CPU: r.CPUSeconds}}
	r.Finished, r.Done = err == nil, 1
	if err != nil {
		r.Error = err.Error()
	}
	kept := benchkit.HeapAfterGC()
	r.InputMiB, r.PeakHeapMiB, r.KeptHeapMiB, r.PeakRSSMiB = mib(inputs), mib(sub(peak, inputs)), mib(sub(kept, inputs)), mib(benchkit.ProcStatus("VmHWM:"))
	r.Outputs["keys"] = len(keys)
	for _, out := range outs {
		var targets []v1alpha1.Target
		switch out := out.(type) {
		case *v1alpha1.EffectivePolicy:
			targets = out.Targets
		case *v1alpha1.ClusterEffectivePolicy:
			targets = out.Targets
		}
		r.Outputs["targets"] += len(targets)
		for _, t := range targets {
			for _, tp := range t.Policies {
				r.Outputs["contexts"] += len(tp.Effective)
				if t.Kind == "HTTPRoute" {
					r.Outputs["httpRouteContexts"] += len(tp.Effective)
				}
			}
		}
	}
	runtime.KeepAlive(objs)
	runtime.KeepAlive(outs)
	return r
}

// RunPM generates the topology, converts it (timed apart), drops the
// unstructured objects, and measures BuildTopology and ComputeEffective;
// past timeout it stops and reports the fraction done.
func RunPM(o scale.Options, timeout time.Duration) Result {
	r := Result{Side: SidePM, GOMAXPROCS: runtime.GOMAXPROCS(0), Outputs: map[string]int{}}
	in, convert, err := generateTyped(o, &r.Topology)
	r.Phases = append(r.Phases, convert)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	inputs := benchkit.HeapAfterGC() // the unstructured objects are garbage by now
	sampler := benchkit.StartHeapSampler(2 * time.Millisecond)
	total := StartSpan()

	span := StartSpan()
	topology, err := BuildTopology(in)
	w, c := span.End()
	r.Phases = append(r.Phases, Phase{Name: "NewGatewayAPITopology", Wall: w, CPU: c})
	var effective Effective
	var prog Progress
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		span = StartSpan()
		effective, err = ComputeEffective(ctx, topology, Kinds(), &prog)
		w, c = span.End()
		cancel()
		r.Phases = append(r.Phases, Phase{Name: "effective policies (Paths + fold, per kind)", Wall: w, CPU: c})
	}
	r.WallSeconds, r.CPUSeconds = total.End()
	peak, _ := sampler.Stop()
	r.Finished = err == nil
	r.Done = 1
	if err != nil {
		r.Error = err.Error()
		if errors.Is(err, context.DeadlineExceeded) && prog.Total.Load() > 0 {
			r.Done = float64(prog.Done.Load()) / float64(prog.Total.Load())
		}
	}
	kept := benchkit.HeapAfterGC()
	r.InputMiB, r.PeakHeapMiB, r.KeptHeapMiB, r.PeakRSSMiB = mib(inputs), mib(sub(peak, inputs)), mib(sub(kept, inputs)), mib(benchkit.ProcStatus("VmHWM:"))
	r.Outputs["paths"] = int(prog.Paths.Load())
	r.Outputs["ruleQueries"] = int(prog.Done.Load())
	for kind, m := range effective {
		r.Outputs["effectivePolicies"] += len(m)
		r.Outputs["effectivePolicies/"+kind] = len(m)
	}
	runtime.KeepAlive(in)
	runtime.KeepAlive(topology)
	runtime.KeepAlive(effective)
	return r
}

// generateTyped generates the topology, counts it into t and converts it,
// timing the conversion; the unstructured objects do not outlive it.
func generateTyped(o scale.Options, t *Topology) (*Inputs, Phase, error) {
	objs := scale.Generate(o)
	*t = CountTopology(o, objs)
	span := StartSpan()
	in, err := Convert(objs)
	w, c := span.End()
	return in, Phase{Name: "convert to typed objects (not in the total)", Wall: w, CPU: c}, err
}

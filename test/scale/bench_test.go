package scale

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/klog/v2"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/live"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/benchkit"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/startup"
)

// Benchmarks run at -scale (default 1: the large benchmark size) and
// -seed; BenchmarkLiveStartUp at -live-scale (default 0.1):
//
//	go test -run '^$' -bench . -benchmem -benchtime 1x ./test/scale -args -scale=0.1
var (
	scaleFlag     = flag.Float64("scale", 1, "topology size for the benchmarks, relative to the large benchmark size (scale 1)")
	seedFlag      = flag.Uint64("seed", 1, "generator seed for the benchmarks")
	liveScaleFlag = flag.Float64("live-scale", 0.1, "topology size for BenchmarkLiveStartUp")
	profileDir    = flag.String("profile-dir", "", "if set, write CPU profiles of the timed loops of BenchmarkFullComputation (full.prof) and BenchmarkIncrementalGatewayPolicyEdit (incremental.prof) and BenchmarkIncrementalRouteEditThenPolicyEdit (route-then-policy.prof) there")
)

// profile starts a CPU profile of the timed part of a benchmark, when
// -profile-dir is set; the returned function stops it. A later run of the
// same benchmark (b.N grows) overwrites the file.
func profile(b *testing.B, name string) func() {
	if *profileDir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(*profileDir, name))
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}

// editSeq numbers edits process-wide, so that every edit of every run of a
// benchmark changes something (an edit back to a value the engine holds is
// a no-op).
var editSeq int64

func nextEdit() int64 { editSeq++; return editSeq }

func benchOptions() Options { return Options{Scale: *scaleFlag, Seed: *seedFlag} }

// steady is an engine in a server's steady state: everything upserted, every
// key computed once. Built once per process and shared by the incremental
// benchmarks (their edits keep it in a steady state).
var steady struct {
	once sync.Once
	objs []*unstructured.Unstructured
	e    *compute.Engine
	keys int
}

func steadyEngine(b *testing.B) (*compute.Engine, []*unstructured.Unstructured) {
	steady.once.Do(func() {
		steady.objs = Generate(benchOptions())
		e, err := compute.NewEngine(compute.Options{})
		if err != nil {
			panic(err)
		}
		for _, o := range steady.objs {
			e.Upsert(o)
		}
		keys := e.Keys()
		for _, k := range keys {
			e.Compute(k)
		}
		steady.e, steady.keys = e, len(keys)
	})
	return steady.e, steady.objs
}

// BenchmarkFullComputation: what a server does at start-up: a fresh engine
// fed every object in bulk mode (Engine.SetBulk, as the live layer does until
// its first full computation), then every key computed by
// runtime.GOMAXPROCS goroutines calling Engine.Compute concurrently.
func BenchmarkFullComputation(b *testing.B) {
	objs := Generate(benchOptions())
	b.ReportAllocs()
	stop := profile(b, "full.prof")
	b.ResetTimer()
	cpu0 := benchkit.CPUTime()
	var keys int
	for i := 0; i < b.N; i++ {
		e, err := startup.BulkEngine(objs)
		if err != nil {
			b.Fatal(err)
		}
		ks := e.Keys()
		if missing := computeParallel(e, ks); missing != nil {
			b.Fatalf("no output for %v", *missing)
		}
		keys = len(ks)
	}
	b.StopTimer()
	stop()
	b.ReportMetric((benchkit.CPUTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(keys), "keys")
	b.ReportMetric(float64(len(objs)), "objects")
}

// computeParallel computes ks on runtime.GOMAXPROCS goroutines (each takes
// the next key), as the live layer does; it returns a key without output.
func computeParallel(e *compute.Engine, ks []compute.Key) *compute.Key {
	var mu sync.Mutex
	var missing *compute.Key
	startup.ComputeParallel(e, ks, func(i int, _ kruntime.Object, ok bool) {
		if !ok {
			mu.Lock()
			missing = &ks[i]
			mu.Unlock()
		}
	})
	return missing
}

// BenchmarkComputeAll: compute.ComputeAll, which feeds the engine in bulk
// mode (no affected-key bookkeeping per Upsert), then computes every key.
func BenchmarkComputeAll(b *testing.B) {
	objs := Generate(benchOptions())
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := benchkit.CPUTime()
	var keys int
	for i := 0; i < b.N; i++ {
		out, err := compute.ComputeAll(objs, compute.Options{})
		if err != nil {
			b.Fatal(err)
		}
		keys = len(out)
	}
	b.StopTimer()
	b.ReportMetric((benchkit.CPUTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(keys), "keys")
}

// firstPolicy returns a copy of the first generated policy at level, but
// for policies on the internal listener, which no route attaches through:
// editing one measures nothing.
func firstPolicy(b *testing.B, objs []*unstructured.Unstructured, level string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetLabels()[LevelLabel] != level {
			continue
		}
		refs, _, _ := unstructured.NestedSlice(o.Object, "spec", "targetRefs")
		if len(refs) == 1 && refs[0].(map[string]interface{})["sectionName"] == InternalListener {
			continue
		}
		return o.DeepCopy()
	}
	b.Fatalf("no policy at level %s", level)
	return nil
}

// editPolicy changes one scalar of the policy's settings (wherever its
// variant keeps them) to a new value.
func editPolicy(p *unstructured.Unstructured, i int64) {
	spec := p.Object["spec"].(map[string]interface{})
	m := spec
	if d, ok := spec["defaults"].(map[string]interface{}); ok {
		m = d
	} else if o, ok := spec["overrides"].(map[string]interface{}); ok {
		m = o
	}
	m["edit"] = i
}

func benchPolicyEdit(b *testing.B, level, prof string) {
	e, objs := steadyEngine(b)
	p := firstPolicy(b, objs, level)
	b.ReportAllocs()
	stop := func() {}
	if prof != "" {
		stop = profile(b, prof)
	}
	b.ResetTimer()
	cpu0 := benchkit.CPUTime()
	keys := 0
	for i := 0; i < b.N; i++ {
		editPolicy(p, nextEdit())
		ks := e.Upsert(p.DeepCopy())
		computeParallel(e, ks)
		keys += len(ks)
	}
	b.StopTimer()
	stop()
	b.ReportMetric((benchkit.CPUTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(keys)/float64(b.N), "keys/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(max(keys, 1)), "ns/key")
	b.ReportMetric(float64(steady.keys), "total-keys")
}

// BenchmarkIncrementalGatewayPolicyEdit: one Gateway-level policy changes a
// value (not its targets); Upsert it, Compute every returned key.
func BenchmarkIncrementalGatewayPolicyEdit(b *testing.B) {
	benchPolicyEdit(b, LevelGateway, "incremental.prof")
}

// BenchmarkIncrementalListenerPolicyEdit: the same for a listener
// (sectionName) policy.
func BenchmarkIncrementalListenerPolicyEdit(b *testing.B) {
	benchPolicyEdit(b, LevelListener, "")
}

// BenchmarkIncrementalRouteEdit: one HTTPRoute changes (a rule's path match
// and timeout; parents and backends stay); Upsert it, Compute every returned
// key. A topology edit is structural: the engine drops its cached contexts.
func BenchmarkIncrementalRouteEdit(b *testing.B) {
	e, objs := steadyEngine(b)
	var r *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "HTTPRoute" {
			r = o.DeepCopy()
			break
		}
	}
	rules, _, _ := unstructured.NestedSlice(r.Object, "spec", "rules")
	b.ReportAllocs()
	b.ResetTimer()
	keys := 0
	for i := 0; i < b.N; i++ {
		rule := rules[0].(map[string]interface{})
		rule["timeouts"] = map[string]interface{}{"request": fmt.Sprintf("%ds", nextEdit())}
		_ = unstructured.SetNestedSlice(r.Object, rules, "spec", "rules")
		ks := e.Upsert(r.DeepCopy())
		for _, k := range ks {
			e.Compute(k)
		}
		keys += len(ks)
	}
	b.StopTimer()
	b.ReportMetric(float64(keys)/float64(b.N), "keys/op")
	b.ReportMetric(float64(steady.keys), "total-keys")
	// The cost of a structural edit is paid again by the next computations
	// of keys outside the edit (contexts are rebuilt lazily); see
	// BenchmarkIncrementalRouteEditThenPolicyEdit.
}

// BenchmarkIncrementalRouteEditThenPolicyEdit: a route edit followed by the
// Gateway policy edit: the policy edit then rebuilds the contexts the route
// edit invalidated (the spec's worst case for "an edit reaching N targets").
func BenchmarkIncrementalRouteEditThenPolicyEdit(b *testing.B) {
	e, objs := steadyEngine(b)
	var r *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "HTTPRoute" {
			r = o.DeepCopy()
			break
		}
	}
	p := firstPolicy(b, objs, LevelGateway)
	b.ReportAllocs()
	stop := profile(b, "route-then-policy.prof")
	b.ResetTimer()
	cpu0 := benchkit.CPUTime()
	keys := 0
	for i := 0; i < b.N; i++ {
		rules, _, _ := unstructured.NestedSlice(r.Object, "spec", "rules")
		rules[0].(map[string]interface{})["timeouts"] = map[string]interface{}{"request": fmt.Sprintf("%ds", nextEdit())}
		_ = unstructured.SetNestedSlice(r.Object, rules, "spec", "rules")
		for _, k := range e.Upsert(r.DeepCopy()) {
			e.Compute(k)
		}
		editPolicy(p, nextEdit())
		ks := e.Upsert(p.DeepCopy())
		computeParallel(e, ks)
		keys += len(ks)
	}
	b.StopTimer()
	stop()
	b.ReportMetric((benchkit.CPUTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(keys)/float64(b.N), "policy-keys/op")
}

// BenchmarkMemoryPerTarget: heap held by an engine in steady state plus all
// outputs (what the versioned stores keep), per output key, after GC; memo-MB
// is what Engine.DropMemo releases afterwards. The
// inputs themselves (held by the informer caches in a server) are measured
// separately (input-MB).
func BenchmarkMemoryPerTarget(b *testing.B) {
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for i := 0; i < b.N; i++ {
		base := heap()
		objs := Generate(benchOptions())
		withInputs := heap()
		e, err := startup.BulkEngine(objs) // as at start-up (see BenchmarkFullComputation)
		if err != nil {
			b.Fatal(err)
		}
		fed := heap()
		keys := e.Keys()
		outs := make([]kruntime.Object, len(keys))
		startup.ComputeParallel(e, keys, func(i int, o kruntime.Object, _ bool) { outs[i] = o })
		computed := heap()
		e.DropMemo()
		dropped := heap()
		b.ReportMetric(float64(computed-withInputs)/float64(len(keys)), "heap-B/key")
		b.ReportMetric(float64(withInputs-base)/(1<<20), "input-MB")
		b.ReportMetric(float64(fed-withInputs)/(1<<20), "engine-MB")
		b.ReportMetric(float64(computed-fed)/(1<<20), "outputs+memo-MB")
		b.ReportMetric(float64(computed-dropped)/(1<<20), "memo-MB")
		b.ReportMetric(float64(len(keys)), "keys")
		if rss := benchkit.ProcStatus("VmHWM:"); rss > 0 {
			b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MB")
		}
		if rss := benchkit.ProcStatus("VmRSS:"); rss > 0 {
			b.ReportMetric(float64(rss)/(1<<20), "RSS-MB")
		}
		runtime.KeepAlive(outs)
		runtime.KeepAlive(objs)
		runtime.KeepAlive(e)
	}
}

// BenchmarkLiveStartUp: the live layer from Run to ready on a fake dynamic
// client holding the topology at -live-scale: informer lists, the engine
// fed, the first full computation, the versioned stores and the bbolt cache
// written.
func BenchmarkLiveStartUp(b *testing.B) {
	objs := Generate(Options{Scale: *liveScaleFlag, Seed: *seedFlag, GatewayAPICRDs: true})
	klog.SetOutput(io.Discard) // the live layer logs its progress
	klog.LogToStderr(false)
	defer klog.LogToStderr(true)
	b.ReportAllocs()
	var outputs int
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(kruntime.NewScheme(), ListKinds())
		for _, o := range objs {
			if err := client.Tracker().Create(Resource(o), o.DeepCopy(), o.GetNamespace()); err != nil {
				b.Fatal(err)
			}
		}
		o := live.NewOptions()
		o.CacheDir = b.TempDir()
		l, err := o.NewForClient(client)
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		b.StartTimer()
		go func() { defer close(done); _ = l.Run(ctx) }()
		deadline := time.Now().Add(10 * time.Minute)
		for !l.Ready() {
			if time.Now().After(deadline) {
				b.Fatal("not ready after 10 minutes")
			}
			time.Sleep(time.Millisecond)
		}
		b.StopTimer()
		ns, _, _ := l.EffectivePolicies().List(ctx, "")
		cl, _, _ := l.ClusterEffectivePolicies().List(ctx, "")
		outputs = len(ns) + len(cl)
		cancel()
		<-done
	}
	b.ReportMetric(float64(outputs), "outputs")
	b.ReportMetric(float64(len(objs)), "objects")
}

// TestGeneratedTopologyComputes: at a small size every generated policy is
// valid and reaches something, every level yields outputs, and the engine
// agrees with ComputeAll.
func TestGeneratedTopologyComputes(t *testing.T) {
	objs := Generate(Options{Scale: 0.01, Seed: 3})
	all, err := compute.ComputeAll(objs, compute.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reached := map[string]bool{} // ns/name of policies listed as sources
	kinds := map[string]bool{}
	for k, o := range all {
		var targets []v1alpha1.Target
		switch o := o.(type) {
		case *v1alpha1.EffectivePolicy:
			targets = o.Targets
		case *v1alpha1.ClusterEffectivePolicy:
			targets = o.Targets
		}
		for _, tg := range targets {
			kinds[tg.Kind] = true
			for _, tp := range tg.Policies {
				for _, s := range tp.Sources {
					if s.Outcome == v1alpha1.OutcomeInvalid {
						t.Errorf("%v: %s/%s is Invalid: %s", k, s.Namespace, s.Name, s.Message)
					}
					reached[s.Namespace+"/"+s.Name] = true
				}
			}
		}
	}
	for _, o := range objs {
		if o.GroupVersionKind().Group == PolicyGroup && !reached[o.GetNamespace()+"/"+o.GetName()] {
			t.Errorf("policy %s/%s (%s) reaches nothing", o.GetNamespace(), o.GetName(), o.GetLabels()[LevelLabel])
		}
	}
	for _, k := range []string{"GatewayClass", "Namespace", "Gateway", "HTTPRoute", "Service"} {
		if !kinds[k] {
			t.Errorf("no output target of kind %s", k)
		}
	}
	e, _ := compute.NewEngine(compute.Options{})
	for _, o := range objs {
		e.Upsert(o)
	}
	if n := len(e.Keys()); n != len(all) {
		t.Errorf("engine has %d keys, ComputeAll %d", n, len(all))
	}
}

package scale

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/klog/v2"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apiserver"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/live"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/registry"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/benchkit"
)

// The BenchmarkLive* benchmarks run the live layer on a fake dynamic client
// holding the topology at -live-scale, one benchmark per process for the
// memory figures:
//
//	go test -run '^$' -bench '^BenchmarkLiveMemory$' -benchtime 1x ./test/scale -args -live-scale=1

// liveServer is a live layer that reached ready on a fake client.
type liveServer struct {
	l      *live.Live
	client *dynamicfake.FakeDynamicClient
	dir    string
	cancel context.CancelFunc
	done   chan struct{}
	// ready is the wall and CPU time from Run to ready; reaches from Run
	// until the policy reaches, built after ready, are served.
	ready, readyCPU, reaches time.Duration
}

func quietKlog() func() {
	klog.SetOutput(io.Discard) // the live layer logs its progress
	klog.LogToStderr(false)
	return func() { klog.LogToStderr(true) }
}

func fakeClient(b testing.TB, objs []*unstructured.Unstructured) *dynamicfake.FakeDynamicClient {
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(kruntime.NewScheme(), ListKinds())
	for _, o := range objs {
		if err := client.Tracker().Create(Resource(o), o.DeepCopy(), o.GetNamespace()); err != nil {
			b.Fatal(err)
		}
	}
	return client
}

// newLive builds a live layer on client with its cache in dir (restored
// from it when it holds one).
func newLive(b testing.TB, client *dynamicfake.FakeDynamicClient, dir string) *live.Live {
	o := live.NewOptions()
	o.CacheDir = dir
	l, err := o.NewForClient(client)
	if err != nil {
		b.Fatal(err)
	}
	if err := l.CacheError(); err != nil {
		b.Fatal(err)
	}
	return l
}

// startLive builds a live layer on client with its cache in dir and runs it
// until ready.
func startLive(b testing.TB, client *dynamicfake.FakeDynamicClient, dir string) *liveServer {
	return runLive(b, newLive(b, client, dir), client, dir)
}

// runLive runs l until ready.
func runLive(b testing.TB, l *live.Live, client *dynamicfake.FakeDynamicClient, dir string) *liveServer {
	ctx, cancel := context.WithCancel(context.Background())
	s := &liveServer{l: l, client: client, dir: dir, cancel: cancel, done: make(chan struct{})}
	start, cpu0 := time.Now(), benchkit.CPUTime()
	go func() { defer close(s.done); _ = l.Run(ctx) }()
	deadline := time.Now().Add(20 * time.Minute)
	for !l.Ready() {
		if time.Now().After(deadline) {
			b.Fatal("not ready after 20 minutes")
		}
		time.Sleep(time.Millisecond)
	}
	s.ready, s.readyCPU = time.Since(start), benchkit.CPUTime()-cpu0
	if _, _, err := l.PolicyReaches().List(ctx, ""); err != nil { // waits for them
		b.Fatal(err)
	}
	s.reaches = time.Since(start)
	return s
}

func (s *liveServer) stop() {
	s.cancel()
	<-s.done
}

// writeHeapProfile writes the in-use heap to -profile-dir, when set.
func writeHeapProfile(b *testing.B, name string) {
	if *profileDir == "" {
		return
	}
	f, err := os.Create(filepath.Join(*profileDir, name))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkLiveMemory: start-up to ready (wall and CPU time), the heap
// (after GC) of the running server split into the fake cluster's objects and
// the live layer (informer caches, engine, outputs in the versioned stores),
// then a restart from the cache: the heap of the restored stores before Run
// and the time to ready again. Peak RSS (VmHWM) covers the whole process,
// the fake cluster included.
func BenchmarkLiveMemory(b *testing.B) {
	defer quietKlog()()
	for i := 0; i < b.N; i++ {
		base := benchkit.HeapAfterGC()
		// The generated objects live only as long as the fake cluster needs them.
		client := fakeClient(b, Generate(Options{Scale: *liveScaleFlag, Seed: *seedFlag, GatewayAPICRDs: true}))
		withCluster := benchkit.HeapAfterGC()
		s := startLive(b, client, b.TempDir())
		running := benchkit.HeapAfterGC()
		writeHeapProfile(b, "live-heap.prof")
		outputs := countOutputs(s)
		probe := anyOutput(s)
		s.stop()
		dir, ready, readyCPU, reaches := s.dir, s.ready, s.readyCPU, s.reaches
		s = nil

		beforeRestore := benchkit.HeapAfterGC()
		// From construction (the cache opened and restored) to the first
		// read answered with a restored output, before Run: what a restarted
		// server serves while it recomputes.
		restoreStart := time.Now()
		restored := newLive(b, client, dir)
		if _, err := restored.EffectivePolicies().Get(context.Background(), probe.ns, probe.name); err != nil {
			b.Fatalf("a restored output is not served before Run: %v", err)
		}
		servingRestored := time.Since(restoreStart)
		afterRestore := benchkit.HeapAfterGC()
		s2 := runLive(b, restored, client, dir)
		s2.stop()

		b.ReportMetric(ready.Seconds(), "ready-s")
		b.ReportMetric(readyCPU.Seconds(), "ready-cpu-s")
		b.ReportMetric(float64(outputs), "outputs")
		b.ReportMetric(s2.ready.Seconds(), "restart-ready-s")
		b.ReportMetric(servingRestored.Seconds(), "restart-serving-restored-s")
		b.ReportMetric(reaches.Seconds(), "reaches-built-s")
		b.ReportMetric(float64(withCluster-base)/(1<<20), "fake-cluster-MB")
		b.ReportMetric(float64(running-withCluster)/(1<<20), "live-heap-MB")
		b.ReportMetric(float64(afterRestore-beforeRestore)/(1<<20), "restored-heap-MB")
		if rss := benchkit.ProcStatus("VmHWM:"); rss > 0 {
			b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MB")
		}
		runtime.KeepAlive(client)
	}
}

// countOutputs counts the objects both stores hold (the lists are dropped on return, before
// the next heap reading).
func countOutputs(s *liveServer) int {
	ns, _, _ := s.l.EffectivePolicies().List(context.Background(), "")
	cl, _, _ := s.l.ClusterEffectivePolicies().List(context.Background(), "")
	return len(ns) + len(cl)
}

// anyOutput names one EffectivePolicy s serves.
func anyOutput(s *liveServer) struct{ ns, name string } {
	items, _, _ := s.l.EffectivePolicies().List(context.Background(), "")
	for _, o := range items {
		if m, err := meta.Accessor(o); err == nil {
			return struct{ ns, name string }{m.GetNamespace(), m.GetName()}
		}
	}
	return struct{ ns, name string }{}
}

// countingWriter counts the bytes an encoder writes.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// liveEffectivePolicies starts the live layer on the topology at scale and returns it, the
// REST storage of its EffectivePolicies and the codec the server encodes them with:
// NewDefaultAPIGroupInfo adds streaming list encoding (one item at a time) when
// StreamingCollectionEncodingToJSON is on, as it is by default. The caller stops it.
func liveEffectivePolicies(b testing.TB, scale float64) (*liveServer, *registry.REST, kruntime.Encoder) {
	client := fakeClient(b, Generate(Options{Scale: scale, Seed: *seedFlag, GatewayAPICRDs: true}))
	s := startLive(b, client, b.TempDir())
	codec := serializer.NewCodecFactory(apiserver.Scheme, serializer.WithStreamingCollectionEncodingToJSON()).LegacyCodec(v1alpha1.SchemeGroupVersion)
	return s, registry.NewEffectivePolicyREST(s.l.EffectivePolicies()), codec
}

// BenchmarkLiveList: one op is a LIST of every EffectivePolicy through the
// REST storage (rest.Lister, as the API machinery calls it) encoded as JSON
// with the server's codec (streaming list encoding), as a client receives it;
// objects/s and MB/s. The
// GETs of every key (REST Get + JSON encoding) report their p50/p99.
func BenchmarkLiveList(b *testing.B) {
	defer quietKlog()()
	s, r, codec := liveEffectivePolicies(b, *liveScaleFlag)
	defer s.stop()
	ctx := genericapirequest.WithNamespace(context.Background(), "")
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := benchkit.CPUTime()
	var w countingWriter
	var items int
	for i := 0; i < b.N; i++ {
		obj, err := r.List(ctx, &metainternalversion.ListOptions{})
		if err != nil {
			b.Fatal(err)
		}
		items = meta.LenList(obj)
		if err := codec.Encode(obj, &w); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := b.Elapsed()
	cpu := benchkit.CPUTime() - cpu0
	b.StopTimer()
	b.ReportMetric(float64(items), "objects")
	b.ReportMetric(float64(w.n)/float64(b.N)/(1<<20), "MB/list")
	b.ReportMetric(float64(items*b.N)/elapsed.Seconds(), "objects/s")
	b.ReportMetric(float64(w.n)/(1<<20)/elapsed.Seconds(), "MB/s")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")

	list, _, _ := s.l.EffectivePolicies().List(context.Background(), "")
	lat := make([]time.Duration, 0, len(list))
	for _, o := range list {
		p := o
		t0 := time.Now()
		got, err := r.Get(genericapirequest.WithNamespace(context.Background(), p.Namespace), p.Name, &metav1.GetOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := codec.Encode(got, io.Discard); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "get-p50-us")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "get-p99-us")
}

// BenchmarkLiveEditToWatch: from a ready server, one op edits a
// listener-level policy (a value, not its targets) in the fake cluster and
// waits for the watch events it causes; edit-to-last-event is the time
// from the update to the last event of the op (the informer delivering it,
// the debounce, the recomputation of every affected key, Apply, the watch
// fan-out). An op ends 2 s after the last event (the wait is in ns/op, not
// in the latencies).
func BenchmarkLiveEditToWatch(b *testing.B) {
	defer quietKlog()()
	p, client := func() (*unstructured.Unstructured, *dynamicfake.FakeDynamicClient) {
		objs := Generate(Options{Scale: *liveScaleFlag, Seed: *seedFlag, GatewayAPICRDs: true})
		return firstPolicy(b, objs, LevelListener), fakeClient(b, objs)
	}()
	s := startLive(b, client, b.TempDir())
	defer s.stop()
	ctx := context.Background()
	// The informers must be watching before the first edit.
	time.Sleep(time.Second)
	var lat []time.Duration
	events := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		_, rv, _ := s.l.EffectivePolicies().List(ctx, "")
		w, err := s.l.EffectivePolicies().Watch(ctx, "", rv)
		if err != nil {
			b.Fatal(err)
		}
		editPolicy(p, nextEdit())
		b.StartTimer()
		t0 := time.Now()
		if err := client.Tracker().Update(Resource(p), p.DeepCopy(), p.GetNamespace()); err != nil {
			b.Fatal(err)
		}
		var last time.Duration
		n := 0
	loop:
		for {
			quiet := 2 * time.Second
			if n == 0 {
				quiet = time.Minute // the first event: the recomputation of every affected key
			}
			select {
			case _, ok := <-w.ResultChan():
				if !ok {
					break loop
				}
				last = time.Since(t0)
				n++
			case <-time.After(quiet):
				break loop
			}
		}
		b.StopTimer()
		w.Stop()
		if n == 0 {
			b.Fatal("no event after the edit")
		}
		lat = append(lat, last)
		events += n
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(events)/float64(b.N), "events/op")
	b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "edit-to-last-event-p50-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Milliseconds()), "edit-to-last-event-max-ms")
}

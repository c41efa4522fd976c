//go:build e2e && long

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	v1alpha1 "github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	epclient "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned/typed/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/review"
)

// The review flood's knobs: GETs at the concurrency of issue #20's GET goal, reviewers well
// beyond the server's --max-concurrent-reviews, quiet and flooded windows alternated so that the
// machine's other work weighs on both alike.
const (
	floodGetters   = 16
	floodReviewers = 12
	floodWindow    = 10 * time.Second
	floodRounds    = 3
	// Issue #20's GET goal (docs/benchmarks/README.md): EffectivePolicy GET p99 at most this
	// times kube-apiserver's own HTTPRoute GET p99 in the same run, at concurrency 16.
	floodP99Ratio = 1.25
	// How GETs are judged (issue #20: by the server's CPU per request, A/B in the same run): the
	// server's CPU per EffectivePolicy GET under the flood at most this times the quiet windows'.
	// Its goroutines are labeled by kind of request (pkg/apiserver/labels.go), so a CPU profile
	// of each window tells the GETs' CPU from the reviews'. A GET that waited for a review (a
	// lock, a slot, a queue) or paid for one (decoding refused bodies, garbage collection of
	// answers in its own allocations) spends more; the factor leaves room for the profile's
	// sampling (100 Hz, a few hundred samples a side) and caches shared with the flood.
	floodCPUFactor = 2.0
)

// TestLongReviewFloodKeepsGets: reviews from every user cannot take the API away from readers. A
// flood of EffectivePolicyReviews, each at the object bound and reaching that many outputs,
// sent back to back without waiting out a 429, runs beside GETs at concurrency 16, half of
// EffectivePolicies and half of the same routes from kube-apiserver (the baseline of issue #20's
// GET goal). Every GET is answered; the flood fills the server's review slots and the rest are
// refused with 429 without their bodies being read (the server's body-size metric counts only
// those it answers); the server's CPU per GET, from CPU profiles labeled by kind of request,
// stays within floodCPUFactor of the quiet windows'. The GET p99 ratio to kube-apiserver's under
// the flood and in the quiet windows between is logged for docs/review.md.
func TestLongReviewFloodKeepsGets(t *testing.T) {
	ep, dyn := loadClients(t)
	namespaces := setUpLoadTopology(t)
	ns := namespaces[0]
	for _, n := range namespaces {
		kubectlApply(t, fmt.Sprintf(`apiVersion: colors.example.com/v1
kind: ColorPolicy
metadata: {name: flood, namespace: %s}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  color: amber
`, n))
	}
	ctx := context.Background()
	eventually(t, 60*time.Second, "the routes' EffectivePolicies", func() error {
		for _, n := range namespaces {
			if _, err := ep.EffectivePolicies(n).Get(ctx, "r0", metav1.GetOptions{}); err != nil {
				return err
			}
		}
		return nil
	})
	body := floodReviewBody(t, ns)
	rc := ep.RESTClient()
	flood := func(answered, refused *atomic.Int64) func(context.Context) {
		return func(ctx context.Context) {
			// A reviewer of the flood: no retries, no waiting out Retry-After.
			for ctx.Err() == nil {
				err := rc.Post().Resource("effectivepolicyreviews").Body(body).SetHeader("Content-Type", "application/json").MaxRetries(0).Do(ctx).Error()
				switch {
				// A review refused at --review-timeout held the engine all that time: the
				// flood's heaviest case, on a loaded machine.
				case err == nil, apierrors.IsRequestEntityTooLargeError(err):
					answered.Add(1)
				case apierrors.IsTooManyRequests(err):
					refused.Add(1)
				case !windowOver(ctx):
					t.Errorf("a review of the flood: %v", err)
				}
			}
		}
	}
	var quiet, flooded getTimes
	quietCPU, floodCPU := serverCPU{}, serverCPU{}
	var answered, refused atomic.Int64
	window := int(floodWindow / time.Second)
	readBefore := reviewBodiesRead(t)
	for round := 0; round < floodRounds; round++ {
		quietCPU.add(profiled(t, window, func() { quiet.add(timeGets(ctx, t, ep, dyn, namespaces, nil)) }))
		floodCPU.add(profiled(t, window, func() { flooded.add(timeGets(ctx, t, ep, dyn, namespaces, flood(&answered, &refused))) }))
	}
	checkGetCPU(t, quietCPU, floodCPU, len(quiet.ep), len(flooded.ep))
	// Refused reviews are refused before their bodies are read: the server reads those it
	// answers, and at most one more per reviewer and window, cut off by the window's end.
	if read, most := reviewBodiesRead(t)-readBefore, int(answered.Load())+floodRounds*floodReviewers; read > most {
		t.Errorf("the server read %d review bodies, more than the %d answered and %d cut off: refused reviews were read (%d refused)",
			read, answered.Load(), floodRounds*floodReviewers, refused.Load())
	}
	qr, fr := quiet.ratio(), flooded.ratio()
	t.Logf("GET p99, EffectivePolicy / HTTPRoute: quiet %v / %v (%.2fx, %d GETs), under the flood %v / %v (%.2fx, %d GETs); reviews computed %d, refused with 429 %d",
		percentile(quiet.ep, 99), percentile(quiet.route, 99), qr, len(quiet.ep)+len(quiet.route),
		percentile(flooded.ep, 99), percentile(flooded.route, 99), fr, len(flooded.ep)+len(flooded.route), answered.Load(), refused.Load())
	if answered.Load() == 0 || refused.Load() == 0 {
		t.Errorf("the flood did not fill the server's review slots: %d answered, %d refused", answered.Load(), refused.Load())
	}
	// The p99 ratio is a measurement, recorded here and in docs/review.md, not a verdict: a
	// wall-clock ratio on a shared 2-core machine flakes (the standard is benchmarks for speed).
	if fr > floodP99Ratio && fr > floodP99Ratio*qr {
		t.Logf("for the record: under the flood the EffectivePolicy GET p99 is %.2fx the HTTPRoute p99, over the goal %.2fx (quiet %.2fx)", fr, floodP99Ratio, qr)
	}
}

// checkGetCPU: the server's CPU per EffectivePolicy GET under the flood is at most floodCPUFactor
// times the quiet windows'. Both are logged with the reviews' CPU and the unlabeled rest.
func checkGetCPU(t *testing.T, quiet, flood serverCPU, quietGets, floodGets int) {
	t.Helper()
	if quiet["get"] == 0 || quietGets == 0 || floodGets == 0 {
		t.Fatalf("nothing to judge: the quiet profiles saw %.2f CPU-s of GETs, %d GETs quiet, %d under the flood", quiet["get"], quietGets, floodGets)
	}
	q, f := quiet["get"]/float64(quietGets), flood["get"]/float64(floodGets)
	t.Logf("server CPU per EffectivePolicy GET: quiet %.3f ms (%d GETs), under the flood %.3f ms (%d GETs), %.2fx; the server's CPU quiet %v, under the flood %v (CPU-s by request label)",
		q*1e3, quietGets, f*1e3, floodGets, f/q, quiet, flood)
	if f > floodCPUFactor*q {
		t.Errorf("under the flood the server spends %.3f ms of CPU per GET, more than %.1fx the quiet %.3f ms", f*1e3, floodCPUFactor, q*1e3)
	}
}

// windowOver: ctx's deadline has passed, though ctx may not say so yet (its timer fires late on
// a busy machine, and client-go's rate limiter refuses a request that would end after it).
func windowOver(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ctx.Err() != nil || ok && !time.Now().Before(d)
}

// getTimes are the latencies of EffectivePolicy GETs and of the same routes' GETs.
type getTimes struct{ ep, route []time.Duration }

func (g *getTimes) add(o getTimes) {
	g.ep, g.route = append(g.ep, o.ep...), append(g.route, o.route...)
}

// ratio is the EffectivePolicy GET p99 over the HTTPRoute GET p99.
func (g *getTimes) ratio() float64 {
	return float64(percentile(g.ep, 99)) / float64(max(percentile(g.route, 99), time.Microsecond))
}

// floodReviewBody is a review of review.DefaultMaxObjects new routes on ns's Gateway, whose
// policy reaches each of them.
func floodReviewBody(t *testing.T, ns string) []byte {
	t.Helper()
	rv := &v1alpha1.EffectivePolicyReview{TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "EffectivePolicyReview"}}
	for i := 0; i < review.DefaultMaxObjects; i++ {
		rv.Spec.Apply = append(rv.Spec.Apply, runtime.RawExtension{Raw: []byte(fmt.Sprintf(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute",`+
			`"metadata":{"name":"flood-%d","namespace":%q},"spec":{"parentRefs":[{"name":"gw"}],"rules":[{"backendRefs":[{"name":"b0","port":80}]}]}}`, i, ns))})
	}
	b, err := json.Marshal(rv)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// timeGets runs floodGetters goroutines for floodWindow, each GETting the load topology's routes'
// EffectivePolicies and the routes themselves in turn, beside floodReviewers goroutines of load
// when given, and returns every GET's latency.
func timeGets(ctx context.Context, t *testing.T, ep epclient.EffectivepolicyV1alpha1Interface, dyn dynamic.Interface, namespaces []string, load func(context.Context)) getTimes {
	t.Helper()
	window, cancel := context.WithTimeout(ctx, floodWindow)
	defer cancel()
	var wg sync.WaitGroup
	if load != nil {
		for i := 0; i < floodReviewers; i++ {
			wg.Add(1)
			go func() { defer wg.Done(); load(window) }()
		}
	}
	routes := schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}
	var mu sync.Mutex
	var out getTimes
	for g := 0; g < floodGetters; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine getTimes
			for i := g; window.Err() == nil; i++ {
				ns, name := namespaces[(i/2)%len(namespaces)], fmt.Sprintf("r%d", (i/2)%4)
				t0 := time.Now()
				var err error
				if i%2 == 0 {
					_, err = ep.EffectivePolicies(ns).Get(ctx, name, metav1.GetOptions{})
				} else {
					_, err = dyn.Resource(routes).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
				}
				if err != nil {
					t.Errorf("GET %s/%s: %v", ns, name, err)
					return
				}
				switch d := time.Since(t0); {
				case window.Err() != nil:
				case i%2 == 0:
					mine.ep = append(mine.ep, d)
				default:
					mine.route = append(mine.route, d)
				}
			}
			mu.Lock()
			out.add(mine)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// percentile returns the p-th percentile of ds (nearest rank).
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (len(s)*p + 99) / 100
	return s[max(i-1, 0)]
}

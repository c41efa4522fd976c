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
)

// TestLongReviewFloodKeepsGets: reviews from every user cannot take the API away from readers. A
// flood of EffectivePolicyReviews, each at the object bound and reaching that many outputs,
// sent back to back without waiting out a 429, runs beside GETs at concurrency 16, half of
// EffectivePolicies and half of the same routes from kube-apiserver (the baseline of issue #20's
// GET goal). Every GET is answered, the flood fills the server's review slots and the rest are
// refused with 429; the GET p99 ratio to kube-apiserver's under the flood and in the quiet
// windows between is logged for docs/review.md.
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
				case ctx.Err() == nil:
					t.Errorf("a review of the flood: %v", err)
				}
			}
		}
	}
	var quiet, flooded getTimes
	var answered, refused atomic.Int64
	for round := 0; round < floodRounds; round++ {
		quiet.add(timeGets(ctx, t, ep, dyn, namespaces, nil))
		flooded.add(timeGets(ctx, t, ep, dyn, namespaces, flood(&answered, &refused)))
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

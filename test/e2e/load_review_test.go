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

	v1alpha1 "github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
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
	// The goal: GET p99 under the flood at most this times the quiet windows' p99 of the same
	// run (issue #20's ratio to a same-run baseline, docs/benchmarks/README.md).
	floodP99Ratio = 1.25
)

// TestLongReviewFloodKeepsGets: reviews from every user cannot slow the API down for readers. A
// flood of EffectivePolicyReviews, each at the object bound and reaching that many outputs,
// sent back to back without waiting out a 429, runs beside GETs of EffectivePolicies at
// concurrency 16; GET p99 during the flood stays within the goal of the quiet windows' p99.
func TestLongReviewFloodKeepsGets(t *testing.T) {
	ep, _ := loadClients(t)
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

	var quiet, flooded []time.Duration
	var answered, refused atomic.Int64
	for round := 0; round < floodRounds; round++ {
		quiet = append(quiet, timeGets(ctx, t, ep.EffectivePolicies, namespaces, nil)...)
		flooded = append(flooded, timeGets(ctx, t, ep.EffectivePolicies, namespaces, func(ctx context.Context) {
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
		})...)
	}
	q50, q99 := percentile(quiet, 50), percentile(quiet, 99)
	f50, f99 := percentile(flooded, 50), percentile(flooded, 99)
	t.Logf("GETs quiet: %d, p50 %v p99 %v; flooded: %d, p50 %v p99 %v (%.2fx); reviews computed %d, refused with 429 %d",
		len(quiet), q50, q99, len(flooded), f50, f99, float64(f99)/float64(q99), answered.Load(), refused.Load())
	if answered.Load() == 0 || refused.Load() == 0 {
		t.Errorf("the flood did not fill the server's review slots: %d answered, %d refused", answered.Load(), refused.Load())
	}
	if float64(f99) > floodP99Ratio*float64(q99) {
		t.Errorf("GET p99 under the review flood %v > %.2fx the quiet p99 %v", f99, floodP99Ratio, q99)
	}
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

// timeGets runs floodGetters goroutines of GETs of the load topology's routes' EffectivePolicies
// for floodWindow, beside floodReviewers goroutines of load when given, and returns every GET's
// latency.
func timeGets[C interface {
	Get(context.Context, string, metav1.GetOptions) (*v1alpha1.EffectivePolicy, error)
}](ctx context.Context, t *testing.T, client func(string) C, namespaces []string, load func(context.Context)) []time.Duration {
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
	var mu sync.Mutex
	var out []time.Duration
	for g := 0; g < floodGetters; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for i := g; window.Err() == nil; i++ {
				ns, name := namespaces[i%len(namespaces)], fmt.Sprintf("r%d", i%4)
				t0 := time.Now()
				_, err := client(ns).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					t.Errorf("GET %s/%s: %v", ns, name, err)
					return
				}
				if window.Err() == nil {
					mine = append(mine, time.Since(t0))
				}
			}
			mu.Lock()
			out = append(out, mine...)
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

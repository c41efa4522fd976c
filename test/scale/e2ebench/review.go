package main

// EffectivePolicyReview through kube-apiserver (issue: a review of one
// Gateway-level policy edit answers in under 1 s at scale 1, and never
// blocks live updates for longer).

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	epv1alpha1 "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned/typed/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale"
)

// reviewResult is a review of an edit of the Gateway-level policy of
// median reach (the one the edit measurement changes), created Reps times.
type reviewResult struct {
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

// measureReview reviews an edit of p reps times after one unmeasured review.
// How long the engine is held (live edits wait) is measured in process
// (BenchmarkReviewGatewayPolicyEdit); it is part of this time.
func measureReview(ctx context.Context, cs epv1alpha1.EffectivepolicyV1alpha1Interface, dc dynamic.Interface, p *policyReach, reps int) (reviewResult, error) {
	res := reviewResult{Policy: p.id, Reps: reps}
	var plural string
	for _, k := range scale.PolicyKinds {
		if k.Kind == p.kind {
			plural = k.Plural
		}
	}
	if plural == "" {
		return res, fmt.Errorf("unknown policy kind %s", p.kind)
	}
	obj, err := dc.Resource(schema.GroupVersionResource{Group: scale.PolicyGroup, Version: "v1", Resource: plural}).Namespace(p.ns).Get(ctx, p.name, metav1.GetOptions{})
	if err != nil {
		return res, err
	}
	for i := -1; i < reps; i++ {
		setMarker(obj, "benchReview", fmt.Sprintf("review-%d", i))
		raw, err := json.Marshal(obj.Object)
		if err != nil {
			return res, err
		}
		t0 := time.Now()
		out, err := cs.EffectivePolicyReviews().Create(ctx, &v1alpha1.EffectivePolicyReview{Spec: v1alpha1.EffectivePolicyReviewSpec{
			Apply: []runtime.RawExtension{{Raw: raw}},
		}}, metav1.CreateOptions{})
		d := time.Since(t0)
		if err != nil {
			return res, err
		}
		if i < 0 {
			continue // warm-up
		}
		res.Ms = append(res.Ms, float64(d.Microseconds())/1000)
		res.Changes = len(out.Status.Changes)
		b, _ := json.Marshal(out)
		res.ResponseBytes = len(b)
	}
	res.P50 = percentileMs(res.Ms, 0.5)
	for _, x := range res.Ms {
		res.Max = max(res.Max, x)
	}
	return res, nil
}

func mdReview(p func(string, ...interface{}), r Report) {
	x := r.Review
	if x.Reps == 0 {
		return
	}
	p("## EffectivePolicyReview of a Gateway-level policy edit")
	p("")
	p("The edit the edit measurement makes (policy %s), proposed instead of applied: %d changed EffectivePolicies in the answer (%.1f MB of JSON), created %d times with the generated clientset after an unmeasured one.", x.Policy, x.Changes, float64(x.ResponseBytes)/1e6, x.Reps)
	p("")
	p("| p50 | max |")
	p("|---|---|")
	p("| %.0f ms | %.0f ms |", x.P50, x.Max)
	p("")
}

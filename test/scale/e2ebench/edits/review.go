package edits

// EffectivePolicyReview through kube-apiserver: the edit proposed instead of
// applied.

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
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/measure"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/report"
)

// Review reviews an edit of p reps times after one unmeasured review.
// How long the engine is held (live edits wait) is measured in process
// (BenchmarkReviewGatewayPolicyEdit); it is part of this time.
func Review(ctx context.Context, cs epv1alpha1.EffectivepolicyV1alpha1Interface, dc dynamic.Interface, p *measure.PolicyReach, reps int) (report.ReviewResult, error) {
	res := report.ReviewResult{Policy: p.ID, Reps: reps}
	var plural string
	for _, k := range scale.PolicyKinds {
		if k.Kind == p.Kind {
			plural = k.Plural
		}
	}
	if plural == "" {
		return res, fmt.Errorf("unknown policy kind %s", p.Kind)
	}
	obj, err := dc.Resource(schema.GroupVersionResource{Group: scale.PolicyGroup, Version: "v1", Resource: plural}).Namespace(p.NS).Get(ctx, p.Name, metav1.GetOptions{})
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
	res.P50 = measure.PercentileMs(res.Ms, 0.5)
	for _, x := range res.Ms {
		res.Max = max(res.Max, x)
	}
	return res, nil
}

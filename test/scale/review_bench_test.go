package scale

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// BenchmarkReviewGatewayPolicyEdit: an EffectivePolicyReview of one
// Gateway-level policy edit (SPEC §10) on the steady engine, after the memo
// is dropped as the live layer drops it once it is ready. Side by side, the
// same edit made for real (Upsert, compute the returned keys), in the same
// run: a review computes those keys twice (after with a memo of its own,
// before in the restored state) and holds the engine's write lock for all
// of it, which is how long live edits wait.
//
//	go test -run '^$' -bench BenchmarkReviewGatewayPolicyEdit -benchtime 10x ./test/scale -args -scale=1
func BenchmarkReviewGatewayPolicyEdit(b *testing.B) {
	e, objs := steadyEngine(b)
	e.DropMemo()
	p := firstPolicy(b, objs, LevelGateway)
	b.Run("edit", func(b *testing.B) {
		keys := 0
		for i := 0; i < b.N; i++ {
			editPolicy(p, nextEdit())
			ks := e.Upsert(p.DeepCopy())
			computeParallel(e, ks)
			keys += len(ks)
		}
		b.ReportMetric(float64(keys)/float64(b.N), "keys/op")
	})
	b.Run("review", func(b *testing.B) {
		keys := 0
		for i := 0; i < b.N; i++ {
			editPolicy(p, nextEdit())
			outs, err := e.WhatIf(compute.Proposal{Apply: []*unstructured.Unstructured{p.DeepCopy()}})
			if err != nil {
				b.Fatal(err)
			}
			if len(outs) == 0 {
				b.Fatal("the review found nothing to change")
			}
			keys += len(outs)
		}
		b.ReportMetric(float64(keys)/float64(b.N), "keys/op")
	})
}

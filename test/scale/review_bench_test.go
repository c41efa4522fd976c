package scale

import (
	"context"
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/access"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/registry"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/benchkit"
)

// BenchmarkReviewGatewayPolicyEdit: an EffectivePolicyReview of one
// Gateway-level policy edit (docs/spec.md §10) on the steady engine, after the memo
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

// BenchmarkReviewREST: the same Gateway-level policy edit reviewed through
// the REST storage (ReviewREST.Create: the live layer's Review, the changes
// as a caller sees them, with a redactor and an authorizer that allows
// everything) and encoded as JSON, as the server answers it: the part of an
// end-to-end review that is this server's, without HTTP. -profile-dir
// writes review-rest.prof.
//
//	go test -run '^$' -bench '^BenchmarkReviewREST$' -benchtime 5x ./test/scale -args -scale=0.1
func BenchmarkReviewREST(b *testing.B) {
	defer quietKlog()()
	objs := Generate(Options{Scale: *scaleFlag, Seed: *seedFlag, GatewayAPICRDs: true})
	s := startLive(b, fakeClient(b, objs), b.TempDir())
	defer s.stop()
	checker := access.NewChecker(allowAll{}, 0)
	reviews := registry.NewReviewREST(s.l.Answers(), checker, access.NewRedactorWith(checker, s.l.SensitiveFields()))
	ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: "bench", Groups: []string{user.AllAuthenticated}})
	review := func(p *unstructured.Unstructured) (changes, size int) {
		editPolicy(p, nextEdit())
		raw, err := json.Marshal(p)
		if err != nil {
			b.Fatal(err)
		}
		in := &v1alpha1.EffectivePolicyReview{Spec: v1alpha1.EffectivePolicyReviewSpec{Apply: []kruntime.RawExtension{{Raw: raw}}}}
		out, err := reviews.Create(ctx, in, nil, &metav1.CreateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		body, err := json.Marshal(out)
		if err != nil {
			b.Fatal(err)
		}
		return len(out.(*v1alpha1.EffectivePolicyReview).Status.Changes), len(body)
	}
	// The first Gateway-level policy whose edit shows (an edit of a policy
	// that a GatewayClass override hides everywhere changes nothing).
	var p *unstructured.Unstructured
	for _, o := range objs {
		if o.GetLabels()[LevelLabel] == LevelGateway {
			if n, _ := review(o.DeepCopy()); n > 0 {
				p = o.DeepCopy()
				break
			}
		}
	}
	if p == nil {
		b.Fatal("no Gateway-level policy edit changes an EffectivePolicy")
	}
	b.Logf("editing %s %s/%s", p.GetKind(), p.GetNamespace(), p.GetName())
	b.ReportAllocs()
	stop := profile(b, "review-rest.prof")
	b.ResetTimer()
	cpu0 := benchkit.CPUTime()
	changes, size := 0, 0
	for i := 0; i < b.N; i++ {
		n, sz := review(p)
		changes, size = changes+n, size+sz
	}
	b.StopTimer()
	cpu := benchkit.CPUTime() - cpu0
	stop()
	b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(changes)/float64(b.N), "changes/op")
	b.ReportMetric(float64(size)/1e6/float64(b.N), "resp-MB")
}

// allowAll is an authorizer that allows everything.
type allowAll struct{}

func (allowAll) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionAllow, "", nil
}

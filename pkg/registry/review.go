package registry

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/access"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/review"
)

// ReviewREST serves effectivepolicyreviews: create only, nothing stored,
// the live state untouched (docs/spec.md §10). Changes are named only where the
// caller may read the EffectivePolicy, and shown redacted as a get would
// (pkg/review answers; this is its REST face).
type ReviewREST struct {
	createOnly
	source   review.Source
	access   *access.Checker // nil: no authorization, everything visible
	redactor *access.Redactor
	limits   review.Limits
}

// ReviewLimits protect the server from its reviewers (docs/review.md,
// "Bounds"): the size of one review, and how many may be in flight.
type ReviewLimits struct {
	review.Limits
	// MaxInFlight bounds the reviews being answered at once; one more is
	// refused with 429 and RetryAfter before its body is read (0: no
	// bound; ReviewGate, in front of the REST handler). Reviews take turns
	// on the engine, so those in flight beyond the first wait for it.
	MaxInFlight int
	// RetryAfter is the wait a refused reviewer is told (rounded up to
	// seconds, at least one): about one review's turn on the engine.
	RetryAfter time.Duration
}

// WithLimits bounds the size of the reviews r answers; call it before
// serving. How many are answered at once is the ReviewGate's to bound, in
// front of r, before a body is read.
func (r *ReviewREST) WithLimits(l review.Limits) *ReviewREST {
	r.limits = l
	return r
}

// NewReviewREST returns the REST storage of effectivepolicyreviews; checker
// and redactor may be nil (no authorizer).
func NewReviewREST(source review.Source, checker *access.Checker, redactor *access.Redactor) *ReviewREST {
	return &ReviewREST{
		createOnly: createOnly{kind: "EffectivePolicyReview", singular: "effectivepolicyreview", newObj: func() runtime.Object { return &v1alpha1.EffectivePolicyReview{} }},
		source:     source, access: checker, redactor: redactor,
	}
}

var (
	_ rest.Creater                  = (*ReviewREST)(nil) //nolint:misspell // the apiserver's name
	_ rest.Scoper                   = (*ReviewREST)(nil)
	_ rest.SingularNameProvider     = (*ReviewREST)(nil)
	_ rest.GroupVersionKindProvider = (*ReviewREST)(nil)
)

// Create answers the review in the returned object's status
// (review.Answer), admission running once the spec is valid.
func (r *ReviewREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	in, ok := obj.(*v1alpha1.EffectivePolicyReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not an EffectivePolicyReview: %T", obj))
	}
	opts := review.Options{Checker: r.access, Redactor: r.redactor, Limits: r.limits}
	if createValidation != nil {
		opts.Admit = func(ctx context.Context) error { return createValidation(ctx, obj.DeepCopyObject()) }
	}
	out, err := review.Answer(ctx, r.source, in, opts)
	if err != nil {
		return nil, err
	}
	return out, nil
}

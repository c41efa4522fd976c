// Package review answers EffectivePolicyReviews (docs/spec.md §10): a review's
// spec checked and decoded into the proposal the engine reviews
// (proposal.go), the engine's outcomes turned into the changes the caller
// may see (diff.go), and the errors a review meets as the API statuses a
// client gets.
//
// The server's REST storage (pkg/registry) and the kubectl plugin's
// offline answers (`kubectl effectivepolicy diff`) both call Answer, so a
// review reads the same whoever computes it; the plugin does not link the
// server's REST layer for it.
package review

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/access"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// Source computes what a proposal would do: the live layer, or the
// plugin's engine of manifests.
type Source interface {
	// Review returns the outputs the proposal may change, before and
	// after. An error wrapping compute.ErrNotReviewable is the proposal's
	// fault (422), compute.ErrReviewTooLarge its size (413); any other
	// means the source cannot answer now (503).
	Review(ctx context.Context, p compute.Proposal) ([]compute.Outcome, error)
}

// Options say what the caller may see of an answer, and what runs before
// the source is asked.
type Options struct {
	// Checker decides which EffectivePolicies' changes the caller may see
	// (nil: every one).
	Checker *access.Checker
	// Redactor hides the sensitive values the caller may not see (nil:
	// none is hidden).
	Redactor *access.Redactor
	// Admit, when set, runs once the spec is valid and before the source
	// is asked (the API server's admission); its error is the answer.
	Admit func(ctx context.Context) error
	// Limits bound the review's size, checked first (zero: no bound).
	Limits Limits
}

var reviewGK = v1alpha1.SchemeGroupVersion.WithKind("EffectivePolicyReview").GroupKind()

// Answer answers in in's status, on a copy: the changes the caller of ctx
// may see, sorted. Its errors are API statuses (apierrors).
func Answer(ctx context.Context, source Source, in *v1alpha1.EffectivePolicyReview, o Options) (*v1alpha1.EffectivePolicyReview, error) {
	if err := o.Limits.Check(in); err != nil {
		return nil, err
	}
	proposal, errs := ProposalOf(in)
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(reviewGK, in.Name, errs)
	}
	if o.Admit != nil {
		if err := o.Admit(ctx); err != nil {
			return nil, err
		}
	}
	outcomes, err := source.Review(ctx, proposal)
	switch {
	case errors.Is(err, compute.ErrReviewTooLarge):
		return nil, apierrors.NewRequestEntityTooLargeError(err.Error() +
			": live updates would wait longer than the server allows (--review-timeout); review smaller changes, or offline with kubectl effectivepolicy diff --offline")
	case errors.Is(err, compute.ErrNotReviewable):
		return nil, apierrors.NewInvalid(reviewGK, in.Name, field.ErrorList{field.Invalid(field.NewPath("spec"), "", err.Error())})
	case err != nil:
		return nil, apierrors.NewServiceUnavailable(err.Error())
	}
	u, _ := genericapirequest.UserFrom(ctx)
	out := in.DeepCopy()
	out.Status = Changes(ctx, u, outcomes, o.Checker, o.Redactor)
	return out, nil
}

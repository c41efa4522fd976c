package registry

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/access"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/validation"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
)

// ReviewSource is what EffectivePolicyReview asks (the live layer).
type ReviewSource interface {
	// Review returns the outputs the proposal may change, before and
	// after. An error wrapping compute.ErrNotReviewable is the proposal's
	// fault (422), compute.ErrReviewTooLarge its size (413); any other
	// means the server cannot answer now (503).
	Review(ctx context.Context, p compute.Proposal) ([]compute.Outcome, error)
}

// ReviewREST serves effectivepolicyreviews: create only, nothing stored,
// the live state untouched (SPEC §10). Changes are named only where the
// caller may read the EffectivePolicy, and shown redacted as a get would.
type ReviewREST struct {
	createOnly
	source   ReviewSource
	access   *access.Checker // nil: no authorization, everything visible
	redactor *access.Redactor
}

// NewReviewREST returns the REST storage of effectivepolicyreviews; access
// and redactor may be nil (no authorizer).
func NewReviewREST(source ReviewSource, checker *access.Checker, redactor *access.Redactor) *ReviewREST {
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

var reviewGK = v1alpha1.SchemeGroupVersion.WithKind("EffectivePolicyReview").GroupKind()

// Create answers the review in the returned object's status.
func (r *ReviewREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	in, ok := obj.(*v1alpha1.EffectivePolicyReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not an EffectivePolicyReview: %T", obj))
	}
	proposal, errs := ProposalOf(in)
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(reviewGK, in.Name, errs)
	}
	if createValidation != nil {
		if err := createValidation(ctx, obj.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	outcomes, err := r.source.Review(ctx, proposal)
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
	out.Status = r.changes(ctx, u, outcomes)
	return out, nil
}

// changes turns the outcomes into the changes u may see, sorted.
func (r *ReviewREST) changes(ctx context.Context, u user.Info, outcomes []compute.Outcome) v1alpha1.EffectivePolicyReviewStatus {
	var s v1alpha1.EffectivePolicyReviewStatus
	for _, o := range outcomes {
		c := v1alpha1.EffectivePolicyChange{Resource: "effectivepolicies", Namespace: o.Key.Namespace, Name: o.Key.Name}
		if o.Key.Namespace == "" {
			c.Resource = "clustereffectivepolicies"
		}
		before, after := targetsOf(o.Before), targetsOf(o.After)
		switch {
		case o.Before == nil && o.After == nil, reflect.DeepEqual(before, after) && (o.Before == nil) == (o.After == nil):
			continue
		case o.Before == nil:
			c.Change = v1alpha1.ChangeAdded
		case o.After == nil:
			c.Change = v1alpha1.ChangeDeleted
		default:
			c.Change = v1alpha1.ChangeModified
		}
		if !r.access.EffectivePolicyVisible(ctx, u, o.Key.Namespace) {
			s.HiddenChanges++
			continue
		}
		// What changed is found before redaction, so that a change of a
		// sensitive value shows as one (redacted on both sides).
		b, a := changedOnly(before, after)
		c.Before.Targets, c.After.Targets = r.redactor.RedactTargets(ctx, u, b), r.redactor.RedactTargets(ctx, u, a)
		s.Changes = append(s.Changes, c)
	}
	sort.Slice(s.Changes, func(i, j int) bool {
		a, b := s.Changes[i], s.Changes[j]
		if a.Resource != b.Resource {
			return a.Resource < b.Resource
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return s
}

// changedOnly keeps, of a modified EffectivePolicy's targets, those that
// change, and in them the policy kinds that change: a Gateway-level edit
// modifies hundreds of EffectivePolicies, most of whose content (other
// targets sharing the name, other policy kinds) stays as it is, and the
// answer would otherwise repeat all of it twice.
func changedOnly(before, after []v1alpha1.Target) ([]v1alpha1.Target, []v1alpha1.Target) {
	type key struct{ group, kind, name string }
	index := func(ts []v1alpha1.Target) map[key]*v1alpha1.Target {
		m := make(map[key]*v1alpha1.Target, len(ts))
		for i := range ts {
			m[key{ts[i].Group, ts[i].Kind, ts[i].Name}] = &ts[i]
		}
		return m
	}
	b, a := index(before), index(after)
	var outB, outA []v1alpha1.Target
	for _, t := range before {
		k := key{t.Group, t.Kind, t.Name}
		if other, ok := a[k]; ok {
			if pb, pa := changedPolicies(t.Policies, other.Policies); len(pb)+len(pa) > 0 {
				tb, ta := t, *other
				tb.Policies, ta.Policies = pb, pa
				outB, outA = append(outB, tb), append(outA, ta)
			}
			continue
		}
		outB = append(outB, t)
	}
	for _, t := range after {
		if _, ok := b[key{t.Group, t.Kind, t.Name}]; !ok {
			outA = append(outA, t)
		}
	}
	return outB, outA
}

// changedPolicies keeps the policy kinds of one target that differ.
func changedPolicies(before, after []v1alpha1.TargetPolicy) ([]v1alpha1.TargetPolicy, []v1alpha1.TargetPolicy) {
	type key struct{ group, kind string }
	a := make(map[key]*v1alpha1.TargetPolicy, len(after))
	for i := range after {
		a[key{after[i].Group, after[i].Kind}] = &after[i]
	}
	seen := make(map[key]bool, len(before))
	var outB, outA []v1alpha1.TargetPolicy
	for _, p := range before {
		k := key{p.Group, p.Kind}
		seen[k] = true
		other, ok := a[k]
		switch {
		case !ok:
			outB = append(outB, p)
		case !reflect.DeepEqual(p, *other):
			outB, outA = append(outB, p), append(outA, *other)
		}
	}
	for _, p := range after {
		if !seen[key{p.Group, p.Kind}] {
			outA = append(outA, p)
		}
	}
	return outB, outA
}

// targetsOf returns the targets of an output (nil: none).
func targetsOf(obj runtime.Object) []v1alpha1.Target {
	if obj == nil {
		return nil
	}
	t, _ := encoded.TargetsOf(obj)
	return t
}

// ProposalOf checks a review's spec (validation.ValidateEffectivePolicyReview)
// and decodes it into the proposal the engine reviews.
func ProposalOf(rv *v1alpha1.EffectivePolicyReview) (compute.Proposal, field.ErrorList) {
	if errs := validation.ValidateEffectivePolicyReview(rv); len(errs) > 0 {
		return compute.Proposal{}, errs
	}
	var p compute.Proposal
	for i, raw := range rv.Spec.Apply {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw.Raw); err != nil {
			// Validated above; decoding the same bytes again cannot fail.
			return compute.Proposal{}, field.ErrorList{field.Invalid(field.NewPath("spec", "apply").Index(i), "", "not a Kubernetes object: "+err.Error())}
		}
		p.Apply = append(p.Apply, u)
	}
	for _, d := range rv.Spec.Delete {
		p.Delete = append(p.Delete, compute.ObjectKey{Group: d.Group, Kind: d.Kind, Namespace: d.Namespace, Name: d.Name})
	}
	return p, nil
}

package registry

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/access"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/validation"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/requesttrace"
)

// TraceSource is what RequestTrace reads the Gateways from (the live
// layer).
type TraceSource interface {
	// TraceTopology returns the topology to trace in once the outputs are
	// current with every change pending when the call arrived; an error
	// while the server cannot answer yet (its first computation).
	TraceTopology(ctx context.Context) (requesttrace.Topology, error)
}

// TraceREST serves requesttraces: create only, nothing stored (the
// SubjectAccessReview pattern, docs/spec.md §9). The answer names objects only in
// namespaces where the caller may get effectivepolicies, and its policy
// entries are the caller's own view of the effective policies (redacted as
// a GET would be).
type TraceREST struct {
	createOnly
	source   TraceSource
	outputs  Backend         // effectivepolicies
	access   *access.Checker // nil: no authorization, everything visible
	redactor *access.Redactor
}

// NewTraceREST returns the REST storage of requesttraces. access and
// redactor may be nil (no authorizer: nothing is hidden).
func NewTraceREST(source TraceSource, outputs Backend, checker *access.Checker, redactor *access.Redactor) *TraceREST {
	return &TraceREST{
		createOnly: createOnly{kind: "RequestTrace", singular: "requesttrace", newObj: func() runtime.Object { return &v1alpha1.RequestTrace{} }},
		source:     source, outputs: outputs, access: checker, redactor: redactor,
	}
}

var (
	_ rest.Creater                  = (*TraceREST)(nil) //nolint:misspell // the apiserver's name
	_ rest.Scoper                   = (*TraceREST)(nil)
	_ rest.SingularNameProvider     = (*TraceREST)(nil)
	_ rest.GroupVersionKindProvider = (*TraceREST)(nil)
)

// createOnly is what the REST storage of a review kind (created, never
// stored, cluster-scoped: the SubjectAccessReview pattern) says of itself.
type createOnly struct {
	kind, singular string
	newObj         func() runtime.Object
}

// New implements rest.Storage.
func (c createOnly) New() runtime.Object { return c.newObj() }

// Destroy implements rest.Storage.
func (c createOnly) Destroy() {}

// NamespaceScoped implements rest.Scoper: a review may cross namespaces.
func (c createOnly) NamespaceScoped() bool { return false }

// GetSingularName implements rest.SingularNameProvider.
func (c createOnly) GetSingularName() string { return c.singular }

// GroupVersionKind implements rest.GroupVersionKindProvider.
func (c createOnly) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return v1alpha1.SchemeGroupVersion.WithKind(c.kind)
}

var requestTraceGK = v1alpha1.SchemeGroupVersion.WithKind("RequestTrace").GroupKind()

// Create answers the trace in the returned object's status.
func (r *TraceREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	in, ok := obj.(*v1alpha1.RequestTrace)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a RequestTrace: %T", obj))
	}
	if errs := validation.ValidateRequestTrace(in); len(errs) > 0 {
		return nil, apierrors.NewInvalid(requestTraceGK, in.Name, errs)
	}
	if createValidation != nil {
		if err := createValidation(ctx, obj.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	u, _ := genericapirequest.UserFrom(ctx)
	visible := func(ns string) bool { return r.access.EffectivePolicyVisible(ctx, u, ns) }
	if g := in.Spec.Gateway; g != nil && !visible(g.Namespace) {
		return nil, apierrors.NewForbidden(v1alpha1.Resource("requesttraces"), in.Name,
			fmt.Errorf("tracing through Gateways of namespace %q needs get on effectivepolicies there", g.Namespace))
	}
	topo, err := r.source.TraceTopology(ctx)
	if err != nil {
		return nil, apierrors.NewServiceUnavailable(err.Error())
	}
	redact := r.redactor.ForRequest(ctx)
	caller := requesttrace.Caller{
		Visible: visible,
		Effective: func(ns, name string) []v1alpha1.Target {
			o, err := r.outputs.Get(ctx, ns, name)
			if err != nil {
				return nil
			}
			targets, err := redact(o).Targets()
			if err != nil {
				return nil
			}
			return targets
		},
	}
	out, err := requesttrace.Answer(topo, in, caller)
	if _, isAPIError := err.(apierrors.APIStatus); err != nil && !isAPIError {
		return nil, apierrors.NewInternalError(err)
	}
	return out, err
}

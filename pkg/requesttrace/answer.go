package requesttrace

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

var requestTraceGK = v1alpha1.SchemeGroupVersion.WithKind("RequestTrace").GroupKind()

// Answer traces in and returns a copy of it with the status, as the server
// answers a RequestTrace — the server's REST layer and the kubectl plugin's
// offline mode both answer through it. in must be valid
// (validation.ValidateRequestTrace). A spec.gateway that names no Gateway is
// a Kubernetes Invalid error on that field, as for any other field naming
// what is not there; any other failure is returned as it is.
func Answer(topo Topology, in *v1alpha1.RequestTrace, caller Caller) (*v1alpha1.RequestTrace, error) {
	status, err := Trace(topo, in.Spec, caller)
	var notFound ErrGatewayNotFound
	if errors.As(err, &notFound) {
		return nil, apierrors.NewInvalid(requestTraceGK, in.Name, field.ErrorList{
			field.NotFound(field.NewPath("spec", "gateway"), notFound.Namespace+"/"+notFound.Name),
		})
	}
	if err != nil {
		return nil, err
	}
	out := in.DeepCopy()
	out.Status = status
	return out, nil
}

package registry

import (
	"fmt"
	"math"
	"net/http"
	goruntime "runtime"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// DefaultMaxInFlightReviews is the default bound of the reviews being
// answered at once: half the CPUs the Go runtime may use, at least one.
// Reviews take turns on the engine, so more in flight computes no more;
// what they add is the decoding of their bodies and the encoding of their
// answers beside the engine's turn, on CPUs that the server's GETs and, on
// a small machine, kube-apiserver's proxying of them need. Half leaves the
// other half to readers however many reviewers there are.
func DefaultMaxInFlightReviews() int {
	return max(1, goruntime.GOMAXPROCS(0)/2)
}

// ReviewGate bounds the EffectivePolicyReviews being answered at once, in
// front of the API handler: a review takes a slot before its body is read
// and holds it until its answer is written, so a review refused for want
// of a slot costs the server neither reading nor decoding up to
// --review-max-bytes of JSON. Every other request passes through
// untouched: GETs never wait for a slot.
type ReviewGate struct {
	slots      chan struct{}
	retryAfter int // seconds, at least one
	// codecs write the 429 in the encoding the client asked for.
	codecs runtime.NegotiatedSerializer
}

// NewReviewGate returns a gate of l.MaxInFlight slots (0: no bound, a nil
// gate) whose refusals say to retry after l.RetryAfter, rounded up to
// seconds, at least one.
func NewReviewGate(l ReviewLimits, codecs runtime.NegotiatedSerializer) *ReviewGate {
	if l.MaxInFlight <= 0 {
		return nil
	}
	return &ReviewGate{
		slots:      make(chan struct{}, l.MaxInFlight),
		retryAfter: max(1, int(math.Ceil(l.RetryAfter.Seconds()))),
		codecs:     codecs,
	}
}

// Wrap returns h behind the gate. It must run after the generic chain
// has resolved the request's info (authenticated, authorized): pass it
// the API handler that genericapiserver.DefaultBuildHandlerChain wraps,
// so that a caller who may not create reviews is told so (403), not 429.
func (g *ReviewGate) Wrap(h http.Handler) http.Handler {
	if g == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !isReviewCreate(req) {
			h.ServeHTTP(w, req)
			return
		}
		select {
		case g.slots <- struct{}{}:
		default:
			err := apierrors.NewTooManyRequests(fmt.Sprintf(
				"%d EffectivePolicyReviews are being answered, as many as the server takes at once (--max-concurrent-reviews)", cap(g.slots)), g.retryAfter)
			responsewriters.ErrorNegotiated(err, g.codecs, v1alpha1.SchemeGroupVersion, w, req)
			return
		}
		defer func() { <-g.slots }()
		h.ServeHTTP(w, req)
	})
}

// InFlight is the number of reviews holding a slot now.
func (g *ReviewGate) InFlight() int {
	if g == nil {
		return 0
	}
	return len(g.slots)
}

// isReviewCreate: req creates an EffectivePolicyReview (by its resolved
// request info; a request without one is not).
func isReviewCreate(req *http.Request) bool {
	ri, ok := genericapirequest.RequestInfoFrom(req.Context())
	return ok && ri.IsResourceRequest && ri.Verb == "create" &&
		ri.APIGroup == v1alpha1.SchemeGroupVersion.Group && ri.Resource == "effectivepolicyreviews" && ri.Subresource == ""
}

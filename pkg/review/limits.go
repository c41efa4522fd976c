package review

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// The server's default bounds of one review (docs/review.md, "Bounds"). An
// application namespace of the scale-1 topology holds ~47 objects (20
// routes, 20 Services, its policies, the Namespace, a ReferenceGrant): 500
// objects are the manifests of ten such namespaces. A realistic route
// trimmed as the informers trim it is ~1 KB of JSON (docs/storage.md), so
// 512 KiB are ~500 of them, and stay under the server's 1 MiB body limit.
const (
	DefaultMaxObjects = 500
	DefaultMaxBytes   = 512 << 10
)

// Limits bound what one review may ask of the server, before any proposed object is
// decoded or the engine is asked. Zero: no bound (the plugin's offline
// reviews, which cost only their own process).
type Limits struct {
	// MaxObjects bounds the objects to apply and to delete, together.
	MaxObjects int
	// MaxBytes bounds the JSON of the objects to apply, summed.
	MaxBytes int64
}

// Check refuses a review over a bound: too many objects is a 422 naming
// spec and the bound (as Kubernetes refuses a list with too many items),
// too many bytes a 413 naming the bound. The flag that sets each is named,
// so that an operator knows which to raise.
func (l Limits) Check(rv *v1alpha1.EffectivePolicyReview) error {
	n := len(rv.Spec.Apply) + len(rv.Spec.Delete)
	if l.MaxObjects > 0 && n > l.MaxObjects {
		e := field.TooMany(field.NewPath("spec"), n, l.MaxObjects)
		e.Detail += " to apply and delete in one review (--review-max-objects); review smaller changes, or offline with kubectl effectivepolicy diff --offline"
		return apierrors.NewInvalid(reviewGK, rv.Name, field.ErrorList{e})
	}
	if l.MaxBytes <= 0 {
		return nil
	}
	var size int64
	for _, raw := range rv.Spec.Apply {
		size += int64(len(raw.Raw))
	}
	if size > l.MaxBytes {
		return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf(
			"the objects to apply are %d bytes of JSON, more than the %d a review may propose (--review-max-bytes); "+
				"review smaller changes, or offline with kubectl effectivepolicy diff --offline", size, l.MaxBytes))
	}
	return nil
}

package pagedlist

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Progress is told, as each page but the last arrives, how many objects
// have arrived and how many the list holds in all (-1 when the server does
// not say: it says only for a list without a selector).
type Progress func(listed, total int64)

type progressKey struct{}

// WithProgress is ctx carrying p, for the lists made with it: the caller
// of a Source's list (the ui's store) learns how far a long list is
// without every Source taking a callback.
func WithProgress(ctx context.Context, p Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

// ProgressFrom is the Progress ctx carries, nil when none.
func ProgressFrom(ctx context.Context) Progress {
	p, _ := ctx.Value(progressKey{}).(Progress)
	return p
}

// tell reports page n (1-based) of size objects, whose metadata is lm, to
// the context's Progress: the objects of the pages so far (every page but
// the last is full) and, when the server says how many remain, the total.
func tell(ctx context.Context, n int, size int64, lm *metav1.ListMeta) {
	p := ProgressFrom(ctx)
	if p == nil || lm.Continue == "" || size <= 0 {
		return
	}
	listed, total := int64(n)*size, int64(-1)
	if lm.RemainingItemCount != nil {
		total = listed + *lm.RemainingItemCount
	}
	p(listed, total)
}

package apiserver

import (
	"context"
	"net/http"
	"runtime/pprof"
	"strings"
)

// RequestLabel is the pprof label the server puts on every request's
// goroutines (and those they start, such as the API server's timeout
// filter's), so that a CPU profile of /debug/pprof/profile splits the
// server's CPU by kind of request: "review" for the creation of an
// EffectivePolicyReview, otherwise the request's method in lower case
// ("get" for GET, LIST and WATCH alike). The review flood's test and
// docs/review.md judge GETs by the CPU under "get" per GET, quiet and
// under a flood of reviews.
const RequestLabel = "effectivepolicy.dev/request"

// withRequestLabels labels the goroutine serving each request (see
// RequestLabel) for as long as it serves it.
func withRequestLabels(h http.Handler) http.Handler {
	labels := map[string]context.Context{}
	for _, m := range []string{"review", http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions, "other"} {
		labels[m] = pprof.WithLabels(context.Background(), pprof.Labels(RequestLabel, strings.ToLower(m)))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		kind := req.Method
		switch {
		case req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/effectivepolicyreviews"):
			kind = "review"
		case labels[kind] == nil:
			kind = "other"
		}
		pprof.SetGoroutineLabels(labels[kind])
		defer pprof.SetGoroutineLabels(context.Background())
		h.ServeHTTP(w, req)
	})
}

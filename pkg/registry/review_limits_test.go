package registry_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/sets"
	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/registry"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/review"
)

// TestReviewRESTLimits: a review over a size bound is refused for its size.
func TestReviewRESTLimits(t *testing.T) {
	small := v1alpha1.EffectivePolicyReviewSpec{Apply: []runtime.RawExtension{raw(retry5)}}
	cases := []struct {
		name    string
		limits  review.Limits
		spec    v1alpha1.EffectivePolicyReviewSpec
		wantErr func(error) bool // nil: answered
	}{
		{name: "no bound", spec: small},
		{name: "at the bounds", limits: review.Limits{MaxObjects: 1, MaxBytes: int64(len(retry5))}, spec: small},
		{name: "too many objects", limits: review.Limits{MaxObjects: 1},
			spec: v1alpha1.EffectivePolicyReviewSpec{Apply: small.Apply, Delete: []v1alpha1.ReviewObjectReference{{Kind: "Service", Namespace: "baker", Name: "baker"}}}, wantErr: apierrors.IsInvalid},
		{name: "too many bytes", limits: review.Limits{MaxBytes: int64(len(retry5)) - 1}, spec: small, wantErr: apierrors.IsRequestEntityTooLargeError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := registry.NewReviewREST(answered{}, nil, nil).WithLimits(tc.limits)
			_, err := r.Create(userCtx("ana"), &v1alpha1.EffectivePolicyReview{Spec: tc.spec}, nil, &metav1.CreateOptions{})
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("not answered: %v", err)
			case tc.wantErr != nil && !tc.wantErr(err):
				t.Fatalf("got %v", err)
			}
		})
	}
}

type answered struct{}

func (answered) Review(context.Context, compute.Proposal) ([]compute.Outcome, error) { return nil, nil }

// gatedServer is a ReviewGate in front of an API handler that holds every
// review until release is closed, behind the generic request-info filter
// as in the server's chain. reached counts the requests the API handler
// got; probeRead says whether the body of a request with the header
// X-Probe was read, by anyone.
type gatedServer struct {
	*httptest.Server
	started   chan struct{}
	release   chan struct{}
	reached   atomic.Int64
	probeRead atomic.Bool
}

func newGatedServer(t *testing.T, limits registry.ReviewLimits) *gatedServer {
	t.Helper()
	s := &gatedServer{started: make(chan struct{}, 16), release: make(chan struct{})}
	api := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		s.reached.Add(1)
		if strings.HasSuffix(req.URL.Path, "/effectivepolicyreviews") {
			_, _ = io.Copy(io.Discard, req.Body)
			s.started <- struct{}{}
			<-s.release
		}
		w.WriteHeader(http.StatusOK)
	})
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	gate := registry.NewReviewGate(limits, serializer.NewCodecFactory(scheme))
	resolver := &genericapirequest.RequestInfoFactory{APIPrefixes: sets.NewString("apis", "api"), GrouplessAPIPrefixes: sets.NewString("api")}
	chain := genericapifilters.WithRequestInfo(gate.Wrap(api), resolver)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("X-Probe") != "" {
			req.Body = countingBody{ReadCloser: req.Body, read: &s.probeRead}
		}
		chain.ServeHTTP(w, req)
	}))
	t.Cleanup(s.Close)
	return s
}

const (
	reviewsPath = "/apis/effectivepolicy.dev/v1alpha1/effectivepolicyreviews"
	epPath      = "/apis/effectivepolicy.dev/v1alpha1/namespaces/baker/effectivepolicies/baker"
	tracesPath  = "/apis/effectivepolicy.dev/v1alpha1/requesttraces"
)

// countingBody is a request body that says whether it was read.
type countingBody struct {
	io.ReadCloser
	read *atomic.Bool
}

func (b countingBody) Read(p []byte) (int, error) {
	b.read.Store(true)
	return b.ReadCloser.Read(p)
}

// TestReviewGate: with inFlight reviews being answered, a request is let
// through to the API handler, or refused with 429 and the Retry-After the
// limits say before its body is read. Only review creates take a slot.
func TestReviewGate(t *testing.T) {
	cases := []struct {
		name         string
		limits       registry.ReviewLimits
		inFlight     int
		method, path string
		wantRefused  bool
		retryAfter   string
	}{
		{name: "no bound", inFlight: 3, method: http.MethodPost, path: reviewsPath},
		{name: "a slot left", limits: registry.ReviewLimits{MaxInFlight: 2}, inFlight: 1, method: http.MethodPost, path: reviewsPath},
		{name: "every slot taken: 429, a review's timeout later", limits: registry.ReviewLimits{MaxInFlight: 2, RetryAfter: 2500 * time.Millisecond}, inFlight: 2,
			method: http.MethodPost, path: reviewsPath, wantRefused: true, retryAfter: "3"},
		{name: "every slot taken, no wait given: 429 in a second", limits: registry.ReviewLimits{MaxInFlight: 1}, inFlight: 1,
			method: http.MethodPost, path: reviewsPath, wantRefused: true, retryAfter: "1"},
		{name: "every slot taken: a GET is served", limits: registry.ReviewLimits{MaxInFlight: 1}, inFlight: 1, method: http.MethodGet, path: epPath},
		{name: "every slot taken: a trace is served", limits: registry.ReviewLimits{MaxInFlight: 1}, inFlight: 1, method: http.MethodPost, path: tracesPath},
		{name: "every slot taken: a GET of the reviews' path is not a review", limits: registry.ReviewLimits{MaxInFlight: 1}, inFlight: 1, method: http.MethodGet, path: reviewsPath + "/x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newGatedServer(t, tc.limits)
			var wg sync.WaitGroup
			defer wg.Wait()
			defer close(s.release)
			for i := 0; i < tc.inFlight; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if code := post(t, s.URL+reviewsPath, nil).code; code != http.StatusOK {
						t.Errorf("a review in flight: %d", code)
					}
				}()
				<-s.started
			}
			reachedBefore := s.reached.Load()
			body := strings.NewReader(`{"kind":"EffectivePolicyReview"}`)
			if !tc.wantRefused {
				if tc.method == http.MethodPost && tc.path == reviewsPath {
					wg.Add(1)
					go func() { defer wg.Done(); _ = do(t, tc.method, s.URL+tc.path, body) }()
					<-s.started // it reached the API handler while the others were held
					return
				}
				if code := do(t, tc.method, s.URL+tc.path, body).code; code != http.StatusOK {
					t.Fatalf("%s %s: %d, want it served", tc.method, tc.path, code)
				}
				return
			}
			checkRefusal(t, do(t, tc.method, s.URL+tc.path, body), tc.retryAfter)
			if s.reached.Load() != reachedBefore || s.probeRead.Load() {
				t.Errorf("the refused review reached the API handler (%v) or its body was read (%v)", s.reached.Load() != reachedBefore, s.probeRead.Load())
			}
		})
	}
}

// reply is a response, read and closed.
type reply struct {
	code   int
	header http.Header
	body   []byte
}

// checkRefusal: r is a 429 Status naming the flag, with Retry-After retryAfter.
func checkRefusal(t *testing.T, r reply, retryAfter string) {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal(r.body, &st); err != nil {
		t.Fatalf("the refusal is not a Status: %v", err)
	}
	if r.code != http.StatusTooManyRequests || st.Reason != metav1.StatusReasonTooManyRequests {
		t.Fatalf("got %d %s: %s", r.code, st.Reason, st.Message)
	}
	if got := r.header.Get("Retry-After"); got != retryAfter || !strings.Contains(st.Message, "--max-concurrent-reviews") {
		t.Errorf("Retry-After %q, want %q, naming the flag: %s", got, retryAfter, st.Message)
	}
}

func post(t *testing.T, url string, body io.Reader) reply {
	t.Helper()
	return do(t, http.MethodPost, url, body)
}

// do sends a request; on an error it fails t and returns a reply of status 0.
func do(t *testing.T, method, url string, body io.Reader) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Error(err)
		return reply{}
	}
	req.Header.Set("Content-Type", "application/json")
	if body != nil {
		req.Header.Set("X-Probe", "1")
	}
	// A request let through by mistake would wait for the held reviews: fail, do not hang.
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil { // t.Error, not t.Fatal: some requests are sent from goroutines of their own
		t.Error(err)
		return reply{}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Error(err)
	}
	return reply{code: resp.StatusCode, header: resp.Header, body: b}
}

// TestReviewGateReleasesSlots: a slot is freed when its review is answered.
func TestReviewGateReleasesSlots(t *testing.T) {
	s := newGatedServer(t, registry.ReviewLimits{MaxInFlight: 1})
	close(s.release)
	for i := 0; i < 3; i++ {
		go func() { <-s.started }()
		if code := post(t, s.URL+reviewsPath, nil).code; code != http.StatusOK {
			t.Fatalf("review %d: %d", i, code)
		}
	}
}

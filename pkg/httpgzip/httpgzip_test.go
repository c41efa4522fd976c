package httpgzip

import (
	"bytes"
	"compress/gzip"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
)

// body is n bytes of JSON-like text that compresses as API objects do.
func body(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	var b bytes.Buffer
	for b.Len() < n {
		b.WriteString(`{"kind":"EffectivePolicy","metadata":{"name":"route-`)
		b.WriteString(strings.Repeat("x", rng.IntN(8)))
		b.WriteString(`"},"targets":[]},`)
	}
	return b.Bytes()[:n]
}

// handler writes the body in writes of the given sizes (the rest in one
// write at the end), with the status (0: none set) and headers.
func handler(b []byte, status int, header http.Header, writes ...int) (http.Handler, *http.Header) {
	seen := &http.Header{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*seen = r.Header.Clone()
		for k, v := range header {
			w.Header()[k] = v
		}
		if status != 0 {
			w.WriteHeader(status)
		}
		rest := b
		for _, n := range writes {
			n = min(n, len(rest))
			_, _ = w.Write(rest[:n])
			rest = rest[n:]
		}
		if len(rest) > 0 {
			_, _ = w.Write(rest)
		}
	}), seen
}

func TestWithParallelGzip(t *testing.T) {
	json := http.Header{"Content-Type": {"application/json"}}
	big := body(3<<20 + 17) // several pgzip blocks
	small := body(Threshold)
	cases := []struct {
		name       string
		body       []byte
		status     int
		header     http.Header
		writes     []int
		accept     string
		url        string
		wantGzip   bool
		wantStatus int
		// wantAccept: the handler still sees Accept-Encoding.
		wantAccept bool
	}{
		{name: "large, one write", body: big, header: json, accept: "gzip", wantGzip: true, wantStatus: 200},
		{name: "large, streamed in small writes", body: big, header: json, writes: []int{1, 10, 100, 1000, 64 << 10, 64 << 10}, accept: "deflate, gzip", wantGzip: true, wantStatus: 200},
		{name: "large error status kept", body: big, status: 500, header: json, accept: "gzip", wantGzip: true, wantStatus: 500},
		{name: "exactly the threshold: not compressed", body: small, header: json, writes: []int{100}, accept: "gzip", wantStatus: 200},
		{name: "small with a status", body: body(1000), status: 404, header: json, accept: "gzip", wantStatus: 404},
		{name: "no body, only a status", body: nil, status: 204, accept: "gzip", wantStatus: 204},
		{name: "client does not accept gzip", body: big, header: json, accept: "identity", wantStatus: 200, wantAccept: true},
		{name: "no Accept-Encoding", body: big, header: json, wantStatus: 200},
		{name: "watch untouched", body: big, header: json, accept: "gzip", url: "/apis/x/v1/things?watch=true", wantStatus: 200, wantAccept: true},
		{name: "legacy watch path untouched", body: big, header: json, accept: "gzip", url: "/apis/x/v1/watch/things", wantStatus: 200, wantAccept: true},
		{name: "already encoded by the handler", body: big, header: http.Header{"Content-Encoding": {"br"}}, accept: "gzip", wantStatus: 200},
		{name: "content length dropped when compressing", body: big, header: http.Header{"Content-Length": {"3145745"}}, accept: "gzip", wantGzip: true, wantStatus: 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, seen := handler(c.body, c.status, c.header, c.writes...)
			url := c.url
			if url == "" {
				url = "/apis/x/v1/things"
			}
			req := httptest.NewRequest(http.MethodGet, url, nil)
			if c.accept != "" {
				req.Header.Set("Accept-Encoding", c.accept)
			}
			rec := httptest.NewRecorder()
			WithParallelGzip(h).ServeHTTP(rec, req)
			res := rec.Result()
			if res.StatusCode != c.wantStatus {
				t.Errorf("status %d, want %d", res.StatusCode, c.wantStatus)
			}
			if got := (*seen).Get("Accept-Encoding") != ""; got != c.wantAccept {
				t.Errorf("handler saw Accept-Encoding %q; want it kept: %t", (*seen).Get("Accept-Encoding"), c.wantAccept)
			}
			got := rec.Body.Bytes()
			isGzip := res.Header.Get("Content-Encoding") == "gzip"
			if isGzip != c.wantGzip {
				t.Fatalf("Content-Encoding %q, want gzip: %t", res.Header.Get("Content-Encoding"), c.wantGzip)
			}
			if isGzip {
				if res.Header.Get("Vary") != "Accept-Encoding" || res.Header.Get("Content-Length") != "" {
					t.Errorf("headers %v: want Vary: Accept-Encoding and no Content-Length", res.Header)
				}
				if ct := res.Header.Get("Content-Type"); ct == "" || strings.Contains(ct, "gzip") {
					t.Errorf("Content-Type %q: want the body's, not the encoding's", ct)
				}
				zr, err := gzip.NewReader(bytes.NewReader(got))
				if err != nil {
					t.Fatal(err)
				}
				zr.Multistream(false) // one gzip member, as every client reads it
				if got, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(got, c.body) {
				t.Errorf("body of %d bytes, want the handler's %d", len(got), len(c.body))
			}
		})
	}
}

// TestFlushSendsWhatIsHeld: a handler that flushes before the threshold gets
// its bytes to the client at once, uncompressed.
func TestFlushSendsWhatIsHeld(t *testing.T) {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/apis/x/v1/things", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	WithParallelGzip(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("first"))
		w.(http.Flusher).Flush()
		if !rec.Flushed || rec.Body.String() != "first" {
			t.Errorf("after Flush the client has %q (flushed %t), want \"first\"", rec.Body.String(), rec.Flushed)
		}
		_, _ = w.Write(body(Threshold + 1))
	})).ServeHTTP(rec, req)
	if rec.Header().Get("Content-Encoding") != "" || rec.Body.Len() != len("first")+Threshold+1 {
		t.Errorf("Content-Encoding %q, %d bytes: want the whole body uncompressed", rec.Header().Get("Content-Encoding"), rec.Body.Len())
	}
}

// TestPanicPropagates: a handler's panic (the API server aborts timed-out
// requests with http.ErrAbortHandler) reaches the caller; the filter neither
// swallows it nor panics itself.
func TestPanicPropagates(t *testing.T) {
	req := httptest.NewRequest(http.MethodGet, "/apis/x/v1/things", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	defer func() {
		if r := recover(); r != http.ErrAbortHandler {
			t.Errorf("recovered %v, want http.ErrAbortHandler", r)
		}
	}()
	WithParallelGzip(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(body(Threshold * 3))
		panic(http.ErrAbortHandler)
	})).ServeHTTP(httptest.NewRecorder(), req)
}

// TestFeatureGateOff: with APIResponseCompression off the API server
// compresses nothing, and neither does the filter.
func TestFeatureGateOff(t *testing.T) {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.APIResponseCompression, false)
	h, seen := handler(body(Threshold*2), 0, nil)
	req := httptest.NewRequest(http.MethodGet, "/apis/x/v1/things", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	rec := httptest.NewRecorder()
	WithParallelGzip(h).ServeHTTP(rec, req)
	if rec.Header().Get("Content-Encoding") != "" || (*seen).Get("Accept-Encoding") != "gzip" {
		t.Errorf("Content-Encoding %q, handler saw Accept-Encoding %q: want the request and response untouched",
			rec.Header().Get("Content-Encoding"), (*seen).Get("Accept-Encoding"))
	}
}

// Package httpgzip compresses the server's large responses with gzip on every
// core.
//
// k8s.io/apiserver gzips a response larger than 128 KB for a client that
// accepts gzip, with one compress/gzip writer at level 1: on one core. A LIST
// of every EffectivePolicy of a large cluster is hundreds of MB of JSON, and
// that one core is where its time goes (most of the server's CPU for the
// request). WithParallelGzip takes the request's Accept-Encoding away before
// the API server sees it, so that the API server writes plain bytes, and
// compresses them itself by the same rule (a response is compressed once more
// than 128 KB of it has been written) with klauspost/pgzip: blocks compressed
// on every core into one gzip stream, which any gzip client reads.
package httpgzip

import (
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/klauspost/pgzip"
	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Threshold is k8s.io/apiserver's: a response is compressed once more than
// this much of it has been written (responsewriters.defaultGzipThresholdBytes).
const Threshold = 128 * 1024

// Level is the API server's compression level: the fastest, whose ratio on
// API objects is close to the others' (kubernetes/kubernetes#112296).
const Level = pgzip.BestSpeed

var (
	responses = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "effectivepolicy",
		Name:           "gzip_responses_total",
		Help:           "Responses gzipped on every core (those over 128 KB to clients that accept gzip).",
		StabilityLevel: metrics.ALPHA,
	})
	plainBytes = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "effectivepolicy",
		Name:           "gzip_uncompressed_bytes_total",
		Help:           "Bytes of those responses before compression.",
		StabilityLevel: metrics.ALPHA,
	})
	gzipBytes = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "effectivepolicy",
		Name:           "gzip_compressed_bytes_total",
		Help:           "Bytes of those responses as sent.",
		StabilityLevel: metrics.ALPHA,
	})
	registerOnce sync.Once
)

var writers = sync.Pool{New: func() any {
	w, _ := pgzip.NewWriterLevel(nil, Level) // a valid level never fails
	return w
}}

// WithParallelGzip wraps the server's handler chain (outermost, so that the
// request's Accept-Encoding is gone before the API server's handlers read
// it). Watches, upgrades and range requests are passed on untouched, as are
// all requests when the API server's APIResponseCompression feature is off.
func WithParallelGzip(h http.Handler) http.Handler {
	registerOnce.Do(func() { legacyregistry.MustRegister(responses, plainBytes, gzipBytes) })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !acceptsGzip(r) || isWatch(r) || r.Header.Get("Range") != "" || r.Header.Get("Upgrade") != "" ||
			!utilfeature.DefaultFeatureGate.Enabled(features.APIResponseCompression) {
			h.ServeHTTP(w, r)
			return
		}
		r.Header.Del("Accept-Encoding")
		rw := &responseWriter{ResponseWriter: w}
		completed := false
		defer func() { rw.finish(completed) }()
		h.ServeHTTP(rw, r)
		completed = true
	})
}

// acceptsGzip: gzip is one of the request's Accept-Encoding tokens (as the
// API server reads it: no quality values).
func acceptsGzip(r *http.Request) bool {
	for _, tok := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		if strings.TrimSpace(tok) == "gzip" {
			return true
		}
	}
	return false
}

// isWatch: a watch request (?watch=true or the legacy /watch/ path). Its
// events are written and flushed one by one and never compressed.
func isWatch(r *http.Request) bool {
	switch r.URL.Query().Get("watch") {
	case "1", "true", "True":
		return true
	}
	return strings.Contains(r.URL.Path, "/watch/")
}

// responseWriter holds back the status and the first bytes of a response
// until more than Threshold bytes have been written (then it compresses), the
// handler flushes, or the handler returns (then it does not).
type responseWriter struct {
	http.ResponseWriter
	status  int
	pending []byte
	// out is where the body goes once decided: the gzip writer or the
	// ResponseWriter; nil before.
	out io.Writer
	gz  *pgzip.Writer
	// sent counts the compressed bytes written.
	sent countingWriter
}

// countingWriter counts what it passes on.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// WriteHeader records the status until the body's encoding is decided;
// informational statuses go out at once.
func (w *responseWriter) WriteHeader(code int) {
	switch {
	case code >= 100 && code < 200:
		w.ResponseWriter.WriteHeader(code)
	case w.out != nil:
		w.ResponseWriter.WriteHeader(code) // superfluous; net/http says so
	case w.status == 0:
		w.status = code
	}
}

func (w *responseWriter) Write(p []byte) (int, error) {
	if w.out != nil {
		return w.out.Write(p)
	}
	if len(w.pending)+len(p) <= Threshold {
		w.pending = append(w.pending, p...)
		return len(p), nil
	}
	if len(w.pending) == 0 {
		w.start(true, p)
		return w.out.Write(p)
	}
	w.pending = append(w.pending, p...)
	w.start(true, w.pending)
	if _, err := w.out.Write(w.pending); err != nil {
		return 0, err
	}
	w.pending = nil
	return len(p), nil
}

// start decides the encoding (first is the beginning of the body, for the
// content type) and sends the header.
func (w *responseWriter) start(compress bool, first []byte) {
	w.out = w.ResponseWriter
	if compress && w.Header().Get("Content-Encoding") == "" {
		h := w.Header()
		if h.Get("Content-Type") == "" {
			h.Set("Content-Type", http.DetectContentType(first))
		}
		h.Set("Content-Encoding", "gzip")
		h.Add("Vary", "Accept-Encoding")
		h.Del("Content-Length")
		w.gz = writers.Get().(*pgzip.Writer)
		w.sent = countingWriter{w: w.ResponseWriter}
		w.gz.Reset(&w.sent)
		w.out = w.gz
	}
	if w.status != 0 {
		w.ResponseWriter.WriteHeader(w.status)
	}
}

// Flush sends what is held back (uncompressed, if the encoding was not yet
// decided) and flushes the connection.
func (w *responseWriter) Flush() {
	if w.out == nil {
		w.sendHeld()
	}
	if w.gz != nil {
		_ = w.gz.Flush()
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// sendHeld sends the status and the bytes held back, uncompressed.
func (w *responseWriter) sendHeld() {
	w.start(false, w.pending)
	if len(w.pending) > 0 {
		_, _ = w.out.Write(w.pending)
		w.pending = nil
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish ends the response: what is held back goes out uncompressed, a gzip
// stream is closed. A writer is reused only after a handler that returned
// normally (after a panic its stream may be cut short).
func (w *responseWriter) finish(completed bool) {
	if w.out == nil && completed && (w.status != 0 || len(w.pending) > 0) {
		w.sendHeld()
	}
	if w.gz != nil {
		err := w.gz.Close()
		if err == nil {
			responses.Inc()
			plainBytes.Add(float64(w.gz.UncompressedSize()))
			gzipBytes.Add(float64(w.sent.n))
		}
		if completed && err == nil {
			w.gz.Reset(nil)
			writers.Put(w.gz)
		}
		w.gz = nil
	}
}

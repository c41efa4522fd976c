package scale

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/httpgzip"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/benchkit"
)

// BenchmarkListGzip: the JSON of a LIST of every EffectivePolicy (-scale), as the server
// writes it, gzipped the way k8s.io/apiserver gzips a response (compress/gzip at level 1, on
// the request's goroutine: "apiserver") and the way the server now does (pkg/httpgzip around
// the handler: the same level, blocks compressed on every core: "parallel"), side by side in
// one run. Reports MB/s of JSON, CPU seconds per LIST and the compressed size.
func BenchmarkListGzip(b *testing.B) {
	data := listJSON(b)
	// The server writes a LIST in chunks of ~chunkItems outputs (pkg/encoded).
	write := func(w io.Writer) {
		for rest := data; len(rest) > 0; {
			n := min(len(rest), 4<<20)
			if _, err := w.Write(rest[:n]); err != nil {
				b.Fatal(err)
			}
			rest = rest[n:]
		}
	}
	run := func(b *testing.B, compress func() int64) {
		b.SetBytes(int64(len(data)))
		var out int64
		cpu0 := benchkit.CPUTime()
		for b.Loop() {
			out = compress()
		}
		cpu := benchkit.CPUTime() - cpu0
		b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
		b.ReportMetric(float64(len(data))/(1<<20), "json-MB")
		b.ReportMetric(float64(out)/(1<<20), "gzip-MB")
	}
	b.Run("apiserver", func(b *testing.B) {
		run(b, func() int64 {
			var cw countingWriter
			zw, _ := gzip.NewWriterLevel(&cw, gzip.BestSpeed)
			write(zw)
			if err := zw.Close(); err != nil {
				b.Fatal(err)
			}
			return cw.n
		})
	})
	b.Run("parallel", func(b *testing.B) {
		h := httpgzip.WithParallelGzip(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { write(w) }))
		run(b, func() int64 {
			req := httptest.NewRequest(http.MethodGet, "/apis/effectivepolicy.dev/v1alpha1/effectivepolicies", nil)
			req.Header.Set("Accept-Encoding", "gzip")
			rw := &discardResponse{header: http.Header{}}
			h.ServeHTTP(rw, req)
			if rw.header.Get("Content-Encoding") != "gzip" {
				b.Fatal("the LIST was not compressed")
			}
			return rw.n
		})
	})
}

// listJSON is the LIST of every EffectivePolicy of the live layer at -scale, encoded
// with the server's codec.
func listJSON(b *testing.B) []byte {
	defer quietKlog()()
	s, r, codec := liveEffectivePolicies(b, *scaleFlag)
	defer s.stop()
	obj, err := r.List(genericapirequest.WithNamespace(context.Background(), ""), &metainternalversion.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := codec.Encode(obj, &buf); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// discardResponse is an http.ResponseWriter that counts the body's bytes.
type discardResponse struct {
	header http.Header
	n      int64
}

func (d *discardResponse) Header() http.Header { return d.header }
func (d *discardResponse) WriteHeader(int)     {}
func (d *discardResponse) Write(p []byte) (int, error) {
	d.n += int64(len(p))
	return len(p), nil
}

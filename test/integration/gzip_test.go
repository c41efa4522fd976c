package integration

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/httpgzip"
)

// TestLargeResponsesGzipped: through the server's real handler chain, a LIST larger than
// the threshold comes back as one gzip stream to a client that accepts gzip (and as plain
// JSON to one that does not), decoding to every item; a small one and a watch are never
// compressed.
func TestLargeResponsesGzipped(t *testing.T) {
	ctx := ctxFor(t)
	const ns, n = "gzip-large", 600
	var changes []change
	for i := range n {
		name := fmt.Sprintf("route-%04d", i)
		changes = append(changes, ep(ns, name, nil, target("HTTPRoute", name, policyKind("RetryPolicy", "infra/retry-all", ns+"/retry-"+name))))
	}
	epStore.Apply(changes)
	epStore.Apply([]change{ep("gzip-small", "one", nil, target("HTTPRoute", "one"))})

	// The client's own transport must neither ask for gzip nor undo it:
	// the test sets Accept-Encoding and reads the raw body.
	cfg := withoutRecording(baseConfig)
	cfg.DisableCompression = true
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	list := "/apis/effectivepolicy.dev/v1alpha1/namespaces/" + ns + "/effectivepolicies"
	// The server's own gzip answered, not the API server's (which the
	// filter stands in for): its counter moves.
	before := gzipResponses(t)
	defer func() {
		if after := gzipResponses(t); after <= before {
			t.Errorf("effectivepolicy_gzip_responses_total %v before the LISTs, %v after: the server's gzip did not answer", before, after)
		}
	}()
	for _, tc := range []gzipListCase{
		{name: "large LIST, gzip accepted", path: list, accept: "gzip", wantGzip: true, wantItems: n},
		{name: "large LIST, gzip not accepted", path: list, accept: "", wantItems: n},
		{name: "small LIST", path: "/apis/effectivepolicy.dev/v1alpha1/namespaces/gzip-small/effectivepolicies", accept: "gzip", wantItems: 1},
	} {
		t.Run(tc.name, func(t *testing.T) { checkGzipList(ctx, t, hc, cfg.Host, tc, n) })
	}

	t.Run("watch never compressed", func(t *testing.T) { checkWatchNotGzipped(ctx, t, hc, cfg.Host+list, n) })
}

// gzipListCase: a LIST of path with the given Accept-Encoding, and what
// comes back.
type gzipListCase struct {
	name, path, accept string
	wantGzip           bool
	wantItems          int
}

// checkGzipList lists tc.path from host and checks the encoding of the
// answer and the items it decodes to; a list of large items (of them) must be
// over the gzip threshold as JSON.
func checkGzipList(ctx context.Context, t *testing.T, hc *http.Client, host string, tc gzipListCase, large int) {
	header, body := getRaw(ctx, t, hc, host, tc.path, tc.accept)
	if got := header.Get("Content-Encoding") == "gzip"; got != tc.wantGzip {
		t.Fatalf("Content-Encoding %q, want gzip: %t", header.Get("Content-Encoding"), tc.wantGzip)
	}
	if tc.wantGzip {
		if len(body) >= httpgzip.Threshold {
			t.Errorf("%d bytes of gzip for a list of %d items: not compressed", len(body), large)
		}
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		zr.Multistream(false)
		if body, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	var l v1alpha1.EffectivePolicyList
	if err := json.Unmarshal(body, &l); err != nil {
		t.Fatalf("the body is not a list: %v", err)
	}
	if len(l.Items) != tc.wantItems {
		t.Errorf("%d items, want %d", len(l.Items), tc.wantItems)
	}
	if tc.wantItems == large && len(body) <= httpgzip.Threshold {
		t.Errorf("the list is %d bytes of JSON, not over the threshold: the test proves nothing", len(body))
	}
}

// getRaw GETs path from host as JSON, asking for acceptEncoding when not "",
// and returns the headers and the body as sent.
func getRaw(ctx context.Context, t *testing.T, hc *http.Client, host, path, acceptEncoding string) (http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, host+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", path, resp.Status)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header, body
}

// checkWatchNotGzipped watches listURL, accepting gzip, and reads the n
// initial events as plain JSON.
func checkWatchNotGzipped(ctx context.Context, t *testing.T, hc *http.Client, listURL string, n int) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(wctx, http.MethodGet, listURL+"?watch=true&resourceVersion=0", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "" {
		t.Fatalf("watch Content-Encoding %q, want none", resp.Header.Get("Content-Encoding"))
	}
	// The initial events (every item, over the threshold together)
	// arrive as plain JSON, one by one.
	dec := json.NewDecoder(resp.Body)
	for i := range n {
		var e struct{ Type string }
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
	}
}

// gzipResponses reads effectivepolicy_gzip_responses_total from /metrics.
func gzipResponses(t *testing.T) float64 {
	t.Helper()
	body, err := newClient(t).Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctxFor(t))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^effectivepolicy_gzip_responses_total (\S+)$`).FindSubmatch(body)
	if m == nil {
		t.Fatal("no effectivepolicy_gzip_responses_total in /metrics")
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// localDir is the control plane's state directory (as in TestMain).
func localDir() string {
	if d := os.Getenv("EP_LOCAL_DIR"); d != "" {
		return d
	}
	return filepath.Join(repoRoot, ".local")
}

// localPort returns a port recorded in the control plane's ports.env (KUBE_PORT, SERVER_PORT, ...).
func localPort(t *testing.T, name string) string {
	t.Helper()
	env, err := os.ReadFile(filepath.Join(localDir(), "ports.env"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `=(\d+)$`).FindSubmatch(env)
	if m == nil {
		t.Fatalf("no %s in %s/ports.env:\n%s", name, localDir(), env)
	}
	return string(m[1])
}

// serverHTTP GETs path straight from a server port as the local admin (system:masters), returning
// the status code and body.
func serverHTTP(t *testing.T, port, path string) (int, string, error) {
	t.Helper()
	pki := filepath.Join(localDir(), "pki")
	cert, err := tls.LoadX509KeyPair(filepath.Join(pki, "admin.crt"), filepath.Join(pki, "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: roots, ServerName: "127.0.0.1"},
	}}
	resp, err := client.Get("https://127.0.0.1:" + port + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// scrapeServerMetrics gets /metrics straight from our server's port (the aggregator only proxies
// /apis/effectivepolicy.dev), as the local admin (client certificate; system:masters, so the
// delegated authorization allows the non-resource URL).
func scrapeServerMetrics(t *testing.T) string {
	t.Helper()
	code, body, err := serverHTTP(t, localPort(t, "SERVER_PORT"), "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d\n%s", code, body)
	}
	return body
}

// TestMetrics: our server's /metrics carries the metrics docs/operations.md lists, with the
// informers synced, an open watch counted, and a policy's source and kind counted (its kind,
// ColorPolicy, found by label: semantics Assumed).
func TestMetrics(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	faultFixture(t, "e2e-metrics", 2, "red")
	// An open watch for effectivepolicy_watchers, and a few requests for apiserver_request_total.
	cs := clientset(t, "")
	w, err := cs.EffectivepolicyV1alpha1().EffectivePolicies("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := cs.EffectivepolicyV1alpha1().ClusterEffectivePolicies().List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}

	want := []*regexp.Regexp{
		regexp.MustCompile(`(?m)^effectivepolicy_dirty_keys \d+`),
		regexp.MustCompile(`(?m)^effectivepolicy_cache_size_bytes [1-9]`),
		regexp.MustCompile(`(?m)^effectivepolicy_cache_writes_total \d+`),
		regexp.MustCompile(`(?m)^effectivepolicy_cache_degraded 0$`),
		regexp.MustCompile(`(?m)^effectivepolicy_cache_write_failures_total \d+`),
		regexp.MustCompile(`(?m)^effectivepolicy_recomputed_keys_total \d+`),
		regexp.MustCompile(`(?m)^effectivepolicy_compute_panics_total 0$`),
		regexp.MustCompile(`(?m)^effectivepolicy_recompute_batch_duration_seconds_count \d+`),
		regexp.MustCompile(`(?m)^effectivepolicy_read_wait_seconds_count \d+`),
		regexp.MustCompile(`(?m)^effectivepolicy_informer_synced\{resource="customresourcedefinitions.apiextensions.k8s.io"\} 1$`),
		regexp.MustCompile(`(?m)^effectivepolicy_informer_synced\{resource="namespaces"\} 1$`),
		regexp.MustCompile(`(?m)^effectivepolicy_informer_synced\{resource="services"\} 1$`),
		regexp.MustCompile(`(?m)^effectivepolicy_informer_synced\{resource="httproutes.gateway.networking.k8s.io"\} 1$`),
		regexp.MustCompile(`(?m)^effectivepolicy_watchers\{resource="effectivepolicies"\} [1-9]`),
		regexp.MustCompile(`(?m)^effectivepolicy_gzip_responses_total \d+`),
		regexp.MustCompile(`(?m)^effectivepolicy_gzip_uncompressed_bytes_total \d+`),
		regexp.MustCompile(`(?m)^effectivepolicy_gzip_compressed_bytes_total \d+`),
		regexp.MustCompile(`(?m)^effectivepolicy_policy_sources\{group="colors.example.com",kind="ColorPolicy",outcome="Enforced",semantics="Assumed"\} [2-9]`),
		regexp.MustCompile(`(?m)^effectivepolicy_policy_sources\{group="colors.example.com",kind="ColorPolicy",outcome="Conflicted",semantics="Assumed"\} \d+`),
		regexp.MustCompile(`(?m)^effectivepolicy_policies\{group="colors.example.com",kind="ColorPolicy",semantics="Assumed"\} [1-9]`),
		regexp.MustCompile(`(?m)^effectivepolicy_policies_reaching_nothing\{group="colors.example.com",kind="ColorPolicy",semantics="Assumed"\} \d+`),
		regexp.MustCompile(`(?m)^apiserver_request_total\{.*resource="effectivepolicies".*\} [1-9]`),
		regexp.MustCompile(`(?m)^apiserver_request_total\{.*resource="clustereffectivepolicies".*\} [1-9]`),
	}
	var body string
	eventually(t, 30*time.Second, "metrics on /metrics", func() error {
		body = scrapeServerMetrics(t)
		var missing []string
		for _, re := range want {
			if !re.MatchString(body) {
				missing = append(missing, re.String())
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("missing:\n  %s", strings.Join(missing, "\n  "))
		}
		return nil
	})
}

package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// restartResult is the server restarted on the cache the measured run left
// behind: how soon after its process started it served an EffectivePolicy
// it had before, on its own port and through kube-apiserver.
type restartResult struct {
	// Object is the EffectivePolicy fetched (namespace/name) and its
	// resourceVersion before the restart.
	Object          string `json:"object"`
	ResourceVersion string `json:"resourceVersionBefore"`
	// Seconds from the new process's start (/proc) until the first 200 of a
	// GET of Object on the server's own port (admin client certificate),
	// through kube-apiserver's aggregator (admin kubeconfig), and of the
	// server's /readyz; each polled every 20 ms.
	DirectSeconds     float64 `json:"directGETSeconds"`
	AggregatedSeconds float64 `json:"aggregatedGETSeconds"`
	ReadyzSeconds     float64 `json:"readyzSeconds"`
	// SameResourceVersion: the first GETs answered with the resourceVersion
	// served before the restart (the restored output, not a new one).
	DirectSameRV     bool `json:"directSameResourceVersion"`
	AggregatedSameRV bool `json:"aggregatedSameResourceVersion"`
	// Restored is what the server logged restoring ("Restored outputs from
	// cache" lines), empty if it restored nothing.
	Restored []string `json:"restoredLog"`
}

// runRestart restarts the server of the local control plane (hack/local-up.sh stop-server,
// start-server) once the measurement is done, times the restored outputs being served, and
// adds the result to the report (<report>.json and .md).
func runRestart(args []string) error {
	fs := newFlagSet("restart")
	kubeconfig := fs.String("kubeconfig", "", "admin kubeconfig of the control plane")
	local := fs.String("local", ".local", "local-up state directory")
	localUp := fs.String("local-up", "hack/local-up.sh", "the control-plane script")
	report := fs.String("report", "docs/benchmarks/e2e", "report path without extension (read, then rewritten)")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up after this long")
	_ = fs.Parse(args)
	var rep Report
	if err := readJSON(*report+".json", &rep); err != nil {
		return err
	}
	cfg, err := restConfig(*kubeconfig)
	if err != nil {
		return err
	}
	cfg.Timeout = 5 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	rc := cs.Discovery().RESTClient()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	res, path, err := pickRestored(ctx, rc)
	if err != nil {
		return err
	}
	logf("restart: stopping the server, then starting it on its cache; polling %s", path)
	if out, err := exec.CommandContext(ctx, *localUp, "stop-server").CombinedOutput(); err != nil {
		return fmt.Errorf("%s stop-server: %w\n%s", *localUp, err, out)
	}
	logOffset := fileSize(filepath.Join(*local, "logs", "effectivepolicy-apiserver.log"))
	start := exec.CommandContext(ctx, *localUp, "start-server")
	start.Stdout, start.Stderr = os.Stderr, os.Stderr
	if err := start.Start(); err != nil {
		return err
	}
	startDone := make(chan error, 1)
	go func() { startDone <- start.Wait() }()
	if err := pollRestarted(ctx, rc, *local, path, &res); err != nil {
		return err
	}
	// local-up waits for a table of every EffectivePolicy to answer; it
	// needs no more than that here, and the next step tears everything down.
	select {
	case err := <-startDone:
		if err != nil {
			return fmt.Errorf("%s start-server: %w", *localUp, err)
		}
	case <-time.After(5 * time.Minute):
		_ = start.Process.Kill()
	}
	res.Restored = restoredLines(filepath.Join(*local, "logs", "effectivepolicy-apiserver.log"), logOffset)
	logf("restart: GET of the restored %s %.2f s after the process started (own port), %.2f s through kube-apiserver; /readyz %.2f s",
		res.Object, res.DirectSeconds, res.AggregatedSeconds, res.ReadyzSeconds)
	rep.Restart = &res
	return writeReport(*report, rep)
}

// pickRestored names the first EffectivePolicy of a one-item LIST and its path.
func pickRestored(ctx context.Context, rc rest.Interface) (restartResult, string, error) {
	var l unstructured.UnstructuredList
	raw, err := rc.Get().AbsPath(epPath).Param("limit", "1").DoRaw(ctx)
	if err != nil {
		return restartResult{}, "", err
	}
	if err := l.UnmarshalJSON(raw); err != nil {
		return restartResult{}, "", err
	}
	if len(l.Items) == 0 {
		return restartResult{}, "", fmt.Errorf("no EffectivePolicy to fetch after the restart")
	}
	o := l.Items[0]
	key := o.GetNamespace() + "/" + o.GetName()
	return restartResult{Object: key, ResourceVersion: o.GetResourceVersion()}, epGetPath(key), nil
}

// pollRestarted waits for the new server process and polls, every 20 ms and concurrently,
// the GET of path on the server's port and through kube-apiserver and the server's
// /readyz, until each has answered 200.
func pollRestarted(ctx context.Context, rc rest.Interface, local, path string, res *restartResult) error {
	pid, err := waitPID(ctx, filepath.Join(local, "run", "effectivepolicy-apiserver.pid"))
	if err != nil {
		return err
	}
	started, err := processStart(pid)
	if err != nil {
		return err
	}
	base, hc, err := serverClient(local)
	if err != nil {
		return err
	}
	direct := func(p string) ([]byte, error) {
		resp, err := hc.Get(base + p)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s: %s", p, resp.Status)
		}
		return io.ReadAll(resp.Body)
	}
	aggregated := func(p string) ([]byte, error) { return rc.Get().AbsPath(p).DoRaw(ctx) }
	var wg sync.WaitGroup
	errs := make([]error, 3)
	poll := func(i int, get func(string) ([]byte, error), p string, secs *float64, sameRV *bool) {
		defer wg.Done()
		for {
			if body, err := get(p); err == nil {
				*secs = time.Since(started).Seconds()
				if sameRV != nil {
					var u unstructured.Unstructured
					*sameRV = u.UnmarshalJSON(body) == nil && u.GetResourceVersion() == res.ResourceVersion
				}
				return
			}
			select {
			case <-ctx.Done():
				errs[i] = fmt.Errorf("%s not answered after the restart: %w", p, ctx.Err())
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	wg.Add(3)
	go poll(0, direct, path, &res.DirectSeconds, &res.DirectSameRV)
	go poll(1, aggregated, path, &res.AggregatedSeconds, &res.AggregatedSameRV)
	go poll(2, direct, "/readyz", &res.ReadyzSeconds, nil)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// waitPID reads the pid local-up writes once it has started the process.
func waitPID(ctx context.Context, pidFile string) (int, error) {
	for {
		if data, err := os.ReadFile(pidFile); err == nil {
			if p, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && p > 0 {
				return p, nil
			}
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("no %s: %w", pidFile, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// serverClient is the server's own address (https://127.0.0.1:port) and a client for it
// (adminClient).
func serverClient(local string) (string, *http.Client, error) {
	port, err := serverPort(local)
	if err != nil {
		return "", nil, err
	}
	hc, err := adminClient(filepath.Join(local, "pki"))
	return "https://127.0.0.1:" + port, hc, err
}

// adminClient is an HTTP client with local-up's admin client certificate that trusts
// local-up's CA (which signed the server's serving certificate).
func adminClient(pki string) (*http.Client, error) {
	cert, err := tls.LoadX509KeyPair(filepath.Join(pki, "admin.crt"), filepath.Join(pki, "admin.key"))
	if err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("no certificate in %s/ca.crt", pki)
	}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12},
	}}, nil
}

// fileSize is the size of path, 0 if it cannot be read.
func fileSize(path string) int64 {
	if st, err := os.Stat(path); err == nil {
		return st.Size()
	}
	return 0
}

// restoredLines are the "Restored outputs from cache" lines of path after offset.
func restoredLines(path string, offset int64) []string {
	data, err := os.ReadFile(path)
	if err != nil || int64(len(data)) < offset {
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(data[offset:]), "\n") {
		if strings.Contains(l, "Restored outputs from cache") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

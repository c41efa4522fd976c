package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/localup"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/procfs"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/report"
)

// readyResult is what `e2ebench ready` writes.
type readyResult struct {
	PID int `json:"pid"`
	// ProcessStart is the server process's start time (from /proc, 10 ms
	// resolution).
	ProcessStart time.Time `json:"processStart"`
	// ReadyzSeconds: process start until the server's own /readyz answered
	// 200 (polled every 50 ms, directly on its port).
	ReadyzSeconds float64 `json:"readyzSeconds"`
	// CPUSecondsAtReady: user + system CPU time the server had used by then
	// (comparable across runs on a busy machine, unlike wall time).
	CPUSecondsAtReady float64 `json:"cpuSecondsAtReady"`
}

func runReady(args []string) error {
	fs := newFlagSet("ready")
	local := fs.String("local", ".local", "local-up state directory")
	out := fs.String("o", "", "write the result as JSON here")
	timeout := fs.Duration("timeout", 30*time.Minute, "give up after this long")
	_ = fs.Parse(args)
	deadline := time.Now().Add(*timeout)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	pid, err := localup.WaitPID(ctx, filepath.Join(*local, "run", "effectivepolicy-apiserver.pid"))
	if err != nil {
		return err
	}
	started, err := procfs.ProcessStart(pid)
	if err != nil {
		return err
	}
	port, err := localup.ServerPort(*local)
	if err != nil {
		return err
	}
	// The serving certificate is signed by the local CA; the check here is
	// only whether /readyz says ok, so verification is not the point.
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback readiness probe
	}}
	url := fmt.Sprintf("https://127.0.0.1:%s/readyz", port)
	for {
		resp, err := hc.Get(url)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ok after %s", url, *timeout)
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			return fmt.Errorf("server process %d exited before /readyz was ok", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	res := readyResult{PID: pid, ProcessStart: started, ReadyzSeconds: time.Since(started).Seconds()}
	res.CPUSecondsAtReady, _ = procfs.CPUSeconds(pid)
	fmt.Fprintf(os.Stderr, "e2ebench ready: /readyz ok %.2f s after the server process started\n", res.ReadyzSeconds)
	return report.WriteJSON(*out, res)
}

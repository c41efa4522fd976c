// Package localup reads the state directory hack/local-up.sh keeps for the
// local control plane (.local): the processes' pid files, the server's port,
// the admin client certificate, the server's log and cache file. The
// benchmark reaches the server's own port and process through it.
package localup

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/procfs"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/report"
)

// WaitPID reads the pid local-up writes once it has started the process.
func WaitPID(ctx context.Context, pidFile string) (int, error) {
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

// PIDFromFile reads a pid file (0 when it cannot).
func PIDFromFile(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}

// ServerPort is the server's port, from local-up's ports.env.
func ServerPort(local string) (string, error) {
	data, err := os.ReadFile(filepath.Join(local, "ports.env"))
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "SERVER_PORT="); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("no SERVER_PORT in %s/ports.env", local)
}

// ServerClient is the server's own address (https://127.0.0.1:port) and a client for it
// (adminClient).
func ServerClient(local string) (string, *http.Client, error) {
	port, err := ServerPort(local)
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

// ServerResources reads the server process's memory, CPU time and threads
// and the size of its cache file.
func ServerResources(pid int, local string) (report.ServerResources, error) {
	var r report.ServerResources
	st, err := procfs.StatusKB(pid)
	if err != nil {
		return r, fmt.Errorf("server process %d: %w", pid, err)
	}
	r.PeakRSSBytes, r.EndRSSBytes = st["VmHWM"]<<10, st["VmRSS"]<<10
	r.EndRSSAnonBytes, r.EndRSSFileBytes = st["RssAnon"]<<10, st["RssFile"]<<10
	if r.CPUSeconds, err = procfs.CPUSeconds(pid); err != nil {
		return r, err
	}
	if f, err := procfs.StatFields(pid); err == nil {
		if _, err := fmt.Sscan(f[19], &r.Threads); err != nil {
			return r, fmt.Errorf("threads of process %d: %w", pid, err)
		}
	}
	if started, err := procfs.ProcessStart(pid); err == nil {
		r.ProcessUptime = time.Since(started).Seconds()
	}
	r.BboltFile = filepath.Join(local, "cache", "effectivepolicy.db")
	fi, err := os.Stat(r.BboltFile)
	r.BboltFile = "<cache-dir>/effectivepolicy.db"
	if err != nil {
		return r, err
	}
	r.BboltBytes = fi.Size()
	return r, nil
}

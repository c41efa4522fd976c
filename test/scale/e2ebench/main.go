// Command e2ebench is the end-to-end half of `make bench` (docs/benchmarks): it
// loads the topology of package scale into a real control plane and measures
// the server through kube-apiserver's aggregator. hack/bench-e2e.sh runs it:
//
//	e2ebench load    -kubeconfig K -scale S -o load.json      # before the server starts
//	e2ebench ready   -local .local -o ready.json              # while the server starts
//	e2ebench measure -kubeconfig K -local .local -load load.json -ready ready.json -o docs/benchmarks/e2e
//	e2ebench restart -kubeconfig K -local .local -report docs/benchmarks/e2e  # after measure
//	e2ebench render  -o docs/benchmarks/e2e                   # <o>.md again from <o>.json
//
// `measure` writes <o>.json and <o>.md. Every number comes from this run;
// nothing is estimated.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: e2ebench load|ready|measure|restart|render [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "load":
		err = runLoad(os.Args[2:])
	case "ready":
		err = runReady(os.Args[2:])
	case "measure":
		err = runMeasure(os.Args[2:])
	case "restart":
		err = runRestart(os.Args[2:])
	case "render":
		err = runRender(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (load, ready, measure, restart, render)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2ebench:", err)
		os.Exit(1)
	}
}

// restConfig: high QPS and burst, so that client-side throttling never
// shapes what is measured.
func restConfig(kubeconfig string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS = 5000
	cfg.Burst = 10000
	cfg.Timeout = 10 * time.Minute
	return cfg, nil
}

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
	pid, err := waitPID(ctx, filepath.Join(*local, "run", "effectivepolicy-apiserver.pid"))
	if err != nil {
		return err
	}
	started, err := processStart(pid)
	if err != nil {
		return err
	}
	port, err := serverPort(*local)
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
	res.CPUSecondsAtReady, _ = procCPUSeconds(pid)
	fmt.Fprintf(os.Stderr, "e2ebench ready: /readyz ok %.2f s after the server process started\n", res.ReadyzSeconds)
	return writeJSON(*out, res)
}

func serverPort(local string) (string, error) {
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

// clockTick is USER_HZ, 100 on every Linux architecture Go supports.
const clockTick = 100

// processStart: /proc/<pid>/stat field 22 (starttime, ticks since boot) plus
// btime from /proc/stat.
func processStart(pid int) (time.Time, error) {
	f, err := procStatFields(pid)
	if err != nil {
		return time.Time{}, err
	}
	ticks, err := strconv.ParseInt(f[21], 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, err
	}
	for _, l := range strings.Split(string(stat), "\n") {
		if v, ok := strings.CutPrefix(l, "btime "); ok {
			bt, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return time.Time{}, err
			}
			return time.Unix(bt, 0).Add(time.Duration(ticks) * time.Second / clockTick), nil
		}
	}
	return time.Time{}, fmt.Errorf("no btime in /proc/stat")
}

// procStatFields splits /proc/<pid>/stat into its fields (fields[0] is the
// pid; the command name, in parentheses, may contain spaces).
func procStatFields(pid int) ([]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	return append([]string{"pid", "comm"}, strings.Fields(s[i+1:])...), nil
}

// procCPUSeconds: user + system CPU time of a process.
func procCPUSeconds(pid int) (float64, error) {
	f, err := procStatFields(pid)
	if err != nil {
		return 0, err
	}
	u, err1 := strconv.ParseFloat(f[13], 64)
	s, err2 := strconv.ParseFloat(f[14], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	return (u + s) / clockTick, nil
}

// procStatusKB returns the kB fields of /proc/<pid>/status (VmHWM, VmRSS, ...).
func procStatusKB(pid int) (map[string]int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fs := strings.Fields(v)
		if len(fs) == 2 && fs[1] == "kB" {
			if n, err := strconv.ParseInt(fs[0], 10, 64); err == nil {
				out[k] = n
			}
		}
	}
	return out, sc.Err()
}

// serverLog holds what the server logged about its start-up
// (pkg/live: "Input informers synced", "First computation done; ready").
type serverLog struct {
	InformersSyncedSeconds float64 `json:"informersSyncedSeconds"`
	ReadySeconds           float64 `json:"readySeconds"`
	EffectivePolicies      int     `json:"effectivePolicies"`
	ClusterEffective       int     `json:"clusterEffectivePolicies"`
}

var (
	reSynced = regexp.MustCompile(`"Input informers synced" duration="?([^" ]+)"?`)
	reReady  = regexp.MustCompile(`"First computation done; ready" duration="?([^" ]+)"?.*effectivepolicies=(\d+) clustereffectivepolicies=(\d+)`)
)

// parseServerLog reads the last start-up of the log (local-up appends).
func parseServerLog(path string) (serverLog, error) {
	var out serverLog
	data, err := os.ReadFile(path)
	if err != nil {
		return out, err
	}
	var haveSynced, haveReady bool
	for _, l := range strings.Split(string(data), "\n") {
		if m := reSynced.FindStringSubmatch(l); m != nil {
			if d, err := time.ParseDuration(m[1]); err == nil {
				out.InformersSyncedSeconds, haveSynced = d.Seconds(), true
			}
		}
		if m := reReady.FindStringSubmatch(l); m != nil {
			if d, err := time.ParseDuration(m[1]); err == nil {
				out.ReadySeconds, haveReady = d.Seconds(), true
			}
			out.EffectivePolicies, _ = strconv.Atoi(m[2])
			out.ClusterEffective, _ = strconv.Atoi(m[3])
		}
	}
	if !haveSynced || !haveReady {
		return out, fmt.Errorf("%s: no \"Input informers synced\" / \"First computation done; ready\" lines", path)
	}
	return out, nil
}

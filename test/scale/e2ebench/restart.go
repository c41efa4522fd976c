package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/localup"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/measure"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/procfs"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/report"
)

// runRestart restarts the server of the local control plane (hack/local-up.sh stop-server,
// start-server) once the measurement is done, times the restored outputs being served, and
// adds the result to the report (<report>.json and .md).
func runRestart(args []string) error {
	fs := newFlagSet("restart")
	kubeconfig := fs.String("kubeconfig", "", "admin kubeconfig of the control plane")
	local := fs.String("local", ".local", "local-up state directory")
	localUp := fs.String("local-up", "hack/local-up.sh", "the control-plane script")
	reportPath := fs.String("report", "docs/benchmarks/e2e", "report path without extension (read, then rewritten)")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up after this long")
	_ = fs.Parse(args)
	var rep report.Report
	if err := report.ReadJSON(*reportPath+".json", &rep); err != nil {
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
	measure.Logf("restart: stopping the server, then starting it on its cache; polling %s", path)
	if out, err := exec.CommandContext(ctx, *localUp, "stop-server").CombinedOutput(); err != nil {
		return fmt.Errorf("%s stop-server: %w\n%s", *localUp, err, out)
	}
	logOffset := localup.FileSize(filepath.Join(*local, "logs", "effectivepolicy-apiserver.log"))
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
	res.Restored = localup.RestoredLines(filepath.Join(*local, "logs", "effectivepolicy-apiserver.log"), logOffset)
	measure.Logf("restart: GET of the restored %s %.2f s after the process started (own port), %.2f s through kube-apiserver; /readyz %.2f s",
		res.Object, res.DirectSeconds, res.AggregatedSeconds, res.ReadyzSeconds)
	rep.Restart = &res
	return report.Write(*reportPath, rep)
}

// pickRestored names the first EffectivePolicy of a one-item LIST and its path.
func pickRestored(ctx context.Context, rc rest.Interface) (report.RestartResult, string, error) {
	var l unstructured.UnstructuredList
	raw, err := rc.Get().AbsPath(measure.EPPath).Param("limit", "1").DoRaw(ctx)
	if err != nil {
		return report.RestartResult{}, "", err
	}
	if err := l.UnmarshalJSON(raw); err != nil {
		return report.RestartResult{}, "", err
	}
	if len(l.Items) == 0 {
		return report.RestartResult{}, "", fmt.Errorf("no EffectivePolicy to fetch after the restart")
	}
	o := l.Items[0]
	key := o.GetNamespace() + "/" + o.GetName()
	return report.RestartResult{Object: key, ResourceVersion: o.GetResourceVersion()}, measure.EPGetPath(key), nil
}

// pollRestarted waits for the new server process and polls, every 20 ms and concurrently,
// the GET of path on the server's port and through kube-apiserver and the server's
// /readyz, until each has answered 200.
func pollRestarted(ctx context.Context, rc rest.Interface, local, path string, res *report.RestartResult) error {
	pid, err := localup.WaitPID(ctx, filepath.Join(local, "run", "effectivepolicy-apiserver.pid"))
	if err != nil {
		return err
	}
	started, err := procfs.ProcessStart(pid)
	if err != nil {
		return err
	}
	base, hc, err := localup.ServerClient(local)
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

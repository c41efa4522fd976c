package measure

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"k8s.io/client-go/rest"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/localup"
)

// profileSeconds is how long each CPU profile of the server runs.
const profileSeconds = 8

// ProfileHotPaths writes CPU profiles of the server (its /debug/pprof/profile, on its own
// port with the admin certificate) into dir while it serves, through kube-apiserver, the
// LIST of every EffectivePolicy again and again (profile-list.pb.gz), and GETs of single
// EffectivePolicies at concurrency 16 (profile-get.pb.gz): the hot paths of the goals the
// report measures. Taken after every measurement, so that profiling slows none.
func ProfileHotPaths(ctx context.Context, rc rest.Interface, local, dir string, names []string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base, hc, err := localup.ServerClient(local)
	if err != nil {
		return err
	}
	hc.Timeout = 0 // the profile request lasts profileSeconds
	url := fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, profileSeconds)
	list := func(ctx context.Context) error {
		_, _, err := TimedList(ctx, rc, EPPath)
		return err
	}
	rng := rand.New(rand.NewPCG(1, 9))
	var mu sync.Mutex
	get := func(ctx context.Context) error {
		mu.Lock()
		key := names[rng.IntN(len(names))]
		mu.Unlock()
		return rc.Get().AbsPath(EPGetPath(key)).SetHeader("Accept", "application/json").Do(ctx).Error()
	}
	for _, p := range []struct {
		file    string
		workers int
		work    func(context.Context) error
	}{{"profile-list.pb.gz", 1, list}, {"profile-get.pb.gz", 16, get}} {
		Logf("profiling the server for %d s (%s)", profileSeconds, p.file)
		if err := profileWhile(ctx, hc, url, filepath.Join(dir, p.file), p.workers, p.work); err != nil {
			return err
		}
	}
	return nil
}

// profileWhile runs work on workers goroutines, each again and again, until the profile
// request to url answers, and writes its body to path.
func profileWhile(ctx context.Context, hc *http.Client, url, path string, workers int, work func(context.Context) error) error {
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for wctx.Err() == nil {
				if err := work(wctx); err != nil && wctx.Err() == nil {
					errs <- err
					return
				}
			}
		}()
	}
	resp, err := hc.Get(url)
	var body []byte
	if err == nil {
		body, err = io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s: %s: %s", url, resp.Status, body)
		}
	}
	stop()
	wg.Wait()
	close(errs)
	if err != nil {
		return err
	}
	if werr := <-errs; werr != nil {
		return fmt.Errorf("the load while profiling: %w", werr)
	}
	return os.WriteFile(path, body, 0o644)
}

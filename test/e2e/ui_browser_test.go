//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The helpers of the page's tests (ui_test.go): the plugin's ui server as a
// process, and Debian's headless Chromium (hack/chromium.sh) driven by chromedp.

var (
	uiPluginOnce sync.Once
	uiPluginDir  string
)

// uiPlugin builds the plugin once for the page's tests, into bin/e2e-ui (make clean removes it).
func uiPlugin(t *testing.T) string {
	uiPluginOnce.Do(func() { uiPluginDir = buildPluginTo(t, filepath.Join(repoRoot, "bin", "e2e-ui")) })
	if uiPluginDir == "" {
		t.Fatal("the plugin did not build")
	}
	return uiPluginDir
}

// startUI runs `kubectl-effectivepolicy ui args...` from the plugin in dir and
// returns the URL it prints; the server is stopped when the test ends.
func startUI(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(dir, "kubectl-effectivepolicy"), append([]string{"--kubeconfig", kubeconfig, "ui"}, args...)...)
	cmd.Dir = repoRoot
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("ui %v: %v: %s", args, err, stderr.String())
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("ui %v did not stop on an interrupt", args)
		}
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u := strings.TrimSpace(sc.Text()); strings.HasPrefix(u, "http://127.0.0.1:") {
				urls <- u
			}
		}
	}()
	select {
	case u := <-urls:
		return u
	case <-time.After(30 * time.Second):
		t.Fatalf("ui %v printed no URL: %s", args, stderr.String())
	}
	return ""
}

// newBrowser starts headless Chromium with the flags this machine's closed
// network needs (docs/ui.md) and returns a tab's context.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	path := os.Getenv("CHROMIUM")
	if path == "" {
		path = "chromium"
	}
	if _, err := exec.LookPath(path); err != nil {
		t.Fatalf("no Chromium (%s): hack/e2e.sh installs it with hack/chromium.sh", path)
	}
	profile, err := os.MkdirTemp("", "e2e-chromium")
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(profile),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.WindowSize(1400, 800))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		// Chromium's children may still write in the profile for a moment.
		for range 50 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	// The first action starts the browser, which lives as long as ctx.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[int](`1`)); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

// pageNode is a node of the page's graph as window.epGraph gives it.
type pageNode struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Label     string `json:"label"`
	Outcome   string `json:"outcome"`
	Target    bool   `json:"target"`
	Marked    bool   `json:"marked"`
	// Folded counts the objects folded into the node (not drawn), Open
	// those a click drew that a fold back would hide.
	Folded int `json:"folded"`
	Open   int `json:"open"`
	// X and Y are where the node is drawn.
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// openPage loads u and waits until the page has drawn (or failed: ready is
// then "error").
func openPage(ctx context.Context, t *testing.T, u string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(u), chromedp.WaitReady(`body[data-ready]`)); err != nil {
		t.Fatalf("loading %s: %v", u, err)
	}
	ready, err := chromedp.Run(ctx, chromedp.AttributeValue(`body`, "data-ready"))
	if err != nil {
		t.Fatal(err)
	}
	return ready.Value
}

// graphNodes reads the drawn nodes by id.
func graphNodes(ctx context.Context, t *testing.T) map[string]pageNode {
	t.Helper()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify(window.epGraph.nodes())`))
	if err != nil {
		t.Fatal(err)
	}
	var nodes []pageNode
	if err := json.Unmarshal([]byte(raw), &nodes); err != nil {
		t.Fatal(err)
	}
	out := map[string]pageNode{}
	for _, n := range nodes {
		out[n.ID] = n
	}
	return out
}

// panelText waits until the side panel shows sel and returns its text.
func panelText(ctx context.Context, t *testing.T, sel string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.WaitVisible(`#panel `+sel)); err != nil {
		t.Fatalf("panel %s: %v", sel, err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(`#panel`))
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// screenshot saves the page as name.png under $UI_SCREENSHOTS, the folder
// of the docs' pictures (docs/ui/), when it is set.
func screenshot(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	dir := os.Getenv("UI_SCREENSHOTS")
	if dir == "" {
		return
	}
	time.Sleep(300 * time.Millisecond) // the graph's animation of marks
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// wantText fails unless text holds each of want.
func wantText(text string, want ...string) error {
	for _, w := range want {
		if !strings.Contains(text, w) {
			return fmt.Errorf("no %q in:\n%s", w, text)
		}
	}
	return nil
}

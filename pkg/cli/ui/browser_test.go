//go:build browser

package ui

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The page's own behavior that a real cluster cannot be made to show on
// demand, in headless Chromium (hack/e2e.sh runs these after installing
// it: go test -tags browser -run '^TestBrowser' ./pkg/cli/ui) against this
// package's server over a source the test holds.

// newTestBrowser starts Chromium ($CHROMIUM, else chromium) for one test.
func newTestBrowser(t *testing.T) context.Context {
	t.Helper()
	path := os.Getenv("CHROMIUM")
	if path == "" {
		path = "chromium"
	}
	if _, err := exec.LookPath(path); err != nil {
		t.Fatalf("no Chromium (%s): hack/chromium.sh installs it", path)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 800))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	return ctx
}

// TestBrowserListing: while the server's first list is under way the
// status bar says how far it is, and once the graph is drawn it says what
// is drawn instead.
func TestBrowserListing(t *testing.T) {
	s, gate := heldListServer(t, 15000, 40403)
	ctx, cancel := context.WithTimeout(newTestBrowser(t), time.Minute)
	defer cancel()
	const want = "Listing the effective policies: 15,000 of 40,403…"
	if err := chromedp.Do(ctx, chromedp.Navigate(s.URL())); err != nil {
		close(gate)
		t.Fatal(err)
	}
	// The page asks every half second: wait for the text, then let the list end.
	var during string
	for deadline := time.Now().Add(20 * time.Second); during != want && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		during, _ = chromedp.Run(ctx, chromedp.Text("#status"))
	}
	close(gate)
	if during != want {
		t.Errorf("the status while listing: %q, want %q", during, want)
	}
	if err := chromedp.Do(ctx, chromedp.WaitReady(`body[data-ready="true"]`)); err != nil {
		t.Fatal(err)
	}
	// A question asked just before the graph came may answer after it: it
	// must not bring the listing back.
	time.Sleep(time.Second)
	after, err := chromedp.Run(ctx, chromedp.Text("#status"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(after, "Listing") || !strings.Contains(after, "objects drawn") {
		t.Errorf("the status once drawn: %q", after)
	}
}

//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// liveState is what the page's Live view says of itself (web/src/live.js),
// with what tells a pushed update from a reload or a poll: the marker set
// before the edit survives only without a reload, and the graph is fetched
// once.
type liveState struct {
	State   string `json:"state"`
	Graphs  int    `json:"graphs"`
	Marker  bool   `json:"marker"`
	Fetches int    `json:"fetches"`
}

func readLive(ctx context.Context, t *testing.T) liveState {
	t.Helper()
	var s liveState
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify({
		state: window.epLive.state, graphs: window.epLive.graphs, marker: window.__beforeEdit === true,
		fetches: performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/graph')).length})`))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestUILive: with the demo applied and the page open, an edit of the
// route's own TimeoutPolicy (pointed at another route) shows on the page
// without a reload and without a poll: the server's watch pushed it on
// the /api/live stream. Offline, the page has nothing to follow.
func TestUILive(t *testing.T) {
	dir := uiPlugin(t)
	applyDemo(t)
	ctx := newBrowser(t)

	u := startUI(t, dir, "-A")
	eventually(t, 60*time.Second, "the page with the route's own policy", func() error {
		if ready := openPage(ctx, t, u); ready != "true" {
			return fmt.Errorf("page: %s", ready)
		}
		if n := graphNodes(ctx, t)[demoRoute]; n.Outcome != "partial" || !strings.Contains(n.Label, "5 policies") {
			return fmt.Errorf("route: %+v", n)
		}
		return nil
	})
	eventually(t, 30*time.Second, "the live stream", func() error {
		if s := readLive(ctx, t); s.State != "live" || s.Graphs < 1 {
			return fmt.Errorf("live: %+v", s)
		}
		return nil
	})
	js(ctx, t, `window.__beforeEdit = true`)
	before := readLive(ctx, t)

	kubectl(t, "patch", "-n", "baker", "timeoutpolicies.demo.effectivepolicy.dev", "baker-timeouts", "--type", "merge",
		"-p", `{"spec":{"targetRef":{"name":"frosting"}}}`)
	eventually(t, 60*time.Second, "the edit on the open page", func() error {
		if n := graphNodes(ctx, t)[demoRoute]; n.Outcome != "enforced" || !strings.Contains(n.Label, "4 policies") {
			return fmt.Errorf("route not updated: %+v", n)
		}
		return nil
	})
	after := readLive(ctx, t)
	if !after.Marker || after.Fetches != before.Fetches || after.Graphs <= before.Graphs || after.State != "live" {
		t.Errorf("the update did not come on the stream: before %+v, after %+v", before, after)
	}

	offline := startUI(t, dir, "-A", "--offline", "-f", "hack/demo")
	if ready := openPage(ctx, t, offline); ready != "true" {
		t.Fatalf("offline page: %s", ready)
	}
	eventually(t, 30*time.Second, "the offline page's Live state", func() error {
		if s := readLive(ctx, t); s.State != "off" {
			return fmt.Errorf("live: %+v", s)
		}
		return nil
	})
}

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The objects folded into foldRoute: its rules and their backends.
var foldRouteHeld = []string{foldRule, "/Service/app-3/svc-8", foldSvc, "/Service/app-3/svc-88"}

// TestUIFoldBack: a holder opened by a click folds back (docs/ui.md,
// "Folding") by each of the ways a user has: a second click on it (its
// badge says "▾ fold"), the panel's button (a keyboard reaches it: the
// canvas has no focus) and the header's "Fold all back". Each restores
// what the user saw before the opening: the badge, the leaves hidden, and
// every other object where it was.
func TestUIFoldBack(t *testing.T) {
	dir := uiPlugin(t)
	u := startUI(t, dir, "-A", "--offline", "-f", writeScaleTopology(t, foldScale))
	ctx := newBrowser(t)
	if ready := openPage(ctx, t, u); ready != "true" {
		t.Fatalf("page not ready: %s", ready)
	}
	tapRoute := fmt.Sprintf(`window.epGraph.tap(%q)`, foldRoute)
	cases := []struct {
		name string
		// fold folds the opened route back.
		fold string
	}{
		{name: "a second click on the route", fold: tapRoute},
		{name: "the panel's button", fold: `document.querySelector('#fold-toggle').click()`},
		{name: "Fold all back", fold: `document.querySelector('#fold-all').click()`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := graphNodes(ctx, t)
			if r := before[foldRoute]; !strings.Contains(r.Label, "▸ folded: 1 rule, 3 backends") {
				t.Fatalf("the route before it is opened: %+v", r)
			}
			js(ctx, t, `document.querySelector('#panel').replaceChildren(); `+tapRoute)
			panelText(ctx, t, "#fold-toggle")
			open := graphNodes(ctx, t)
			if r := open[foldRoute]; r.Folded != 0 || r.Open != len(foldRouteHeld) || !strings.Contains(r.Label, "▾ fold: 1 rule, 3 backends") {
				t.Errorf("the opened route: %+v", r)
			}
			for _, id := range foldRouteHeld {
				if _, ok := open[id]; !ok {
					t.Errorf("%s not drawn when the route is opened", id)
				}
			}
			wantControls(ctx, t, "▾ Fold back 1 rule, 3 backends", "true", false)

			js(ctx, t, tc.fold)
			after := graphNodes(ctx, t)
			if r := after[foldRoute]; r.Folded == 0 || r.Open != 0 || !strings.Contains(r.Label, "▸ folded: 1 rule, 3 backends") {
				t.Errorf("the route folded back: %+v", r)
			}
			for _, id := range foldRouteHeld {
				if _, ok := after[id]; ok {
					t.Errorf("%s still drawn after folding back", id)
				}
			}
			if len(after) != len(before) {
				t.Errorf("%d objects drawn after folding back, %d before opening", len(after), len(before))
			}
			for id, n := range after {
				if b, ok := before[id]; !ok || math.Abs(b.X-n.X) > 0.5 || math.Abs(b.Y-n.Y) > 0.5 {
					t.Errorf("%s at (%.1f, %.1f) after folding back, before opening %+v", id, n.X, n.Y, b)
				}
			}
			wantControls(ctx, t, "▸ Draw the 1 rule, 3 backends it holds", "false", true)
		})
	}
}

// wantControls checks the panel's fold button (its text and
// aria-expanded) and whether the header's "Fold all back" is hidden.
func wantControls(ctx context.Context, t *testing.T, text, expanded string, allHidden bool) {
	t.Helper()
	type controls struct {
		Text     string `json:"text"`
		Expanded string `json:"expanded"`
		Hidden   bool   `json:"hidden"`
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[controls](`(() => { const b = document.querySelector('#fold-toggle');
		return { text: b ? b.textContent : '', expanded: b ? b.getAttribute('aria-expanded') : '', hidden: document.querySelector('#fold-all').hidden }; })()`))
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != text || got.Expanded != expanded || got.Hidden != allHidden {
		t.Errorf("fold controls: button %q (aria-expanded %s), Fold all back hidden %v; want %q (%s), %v", got.Text, got.Expanded, got.Hidden, text, expanded, allHidden)
	}
}

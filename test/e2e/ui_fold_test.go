//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"sigs.k8s.io/yaml"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale"
)

// The generated topology at scale 0.005 (test/scale: 100 routes of 3 rules,
// 4 app Namespaces, 25 policies; seed 1): 207 objects on the page, more than
// the page draws unfolded. route-98's rule-2 sends /r98/rule-2 to svc-18.
const (
	foldScale = 0.005
	foldRoute = "gateway.networking.k8s.io/HTTPRoute/app-3/route-98"
	foldRule  = foldRoute + "#rule-2"
	foldSvc   = "/Service/app-3/svc-18"
)

// writeScaleTopology writes the generated topology at scale s to a file.
func writeScaleTopology(t *testing.T, s float64) string {
	t.Helper()
	var buf bytes.Buffer
	for _, o := range scale.Generate(scale.Options{Scale: s, Seed: 1, GatewayAPICRDs: true}) {
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		buf.WriteString("---\n")
		buf.Write(data)
	}
	file := filepath.Join(t.TempDir(), "topology.yaml")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestUIFolded: a graph too large to draw whole has its rules and backends
// folded into what they hang from (docs/ui.md, "Folding"): the route says
// what it holds; a trace draws and marks the rule and backend it matched;
// a policy reaching many folded targets is counted on their holders, one
// reaching a few draws them; a click on the route draws the rest.
func TestUIFolded(t *testing.T) {
	dir := uiPlugin(t)
	u := startUI(t, dir, "-A", "--offline", "-f", writeScaleTopology(t, foldScale))
	ctx := newBrowser(t)
	if ready := openPage(ctx, t, u); ready != "true" {
		t.Fatalf("page not ready: %s", ready)
	}
	status, err := chromedp.Run(ctx, chromedp.Text(`#status`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(status, "folded: click a dashed object") {
		t.Errorf("status: %q", status)
	}
	nodes := graphNodes(ctx, t)
	if r := nodes[foldRoute]; r.Folded == 0 || !strings.Contains(r.Label, "▸ folded: 1 rule, 3 backends") {
		t.Errorf("the folded route: %+v", r)
	}
	for _, id := range []string{foldRule, foldSvc} {
		if _, ok := nodes[id]; ok {
			t.Errorf("%s is drawn, want it folded", id)
		}
	}

	// Request: the matched rule and backend are drawn and marked.
	js(ctx, t, `document.querySelector('#tabs button[data-view=trace]').click();
		document.querySelector('#panel').replaceChildren();
		const f = document.querySelector('#trace-form');
		f.elements.host.value = 'r98.bench.example';
		f.elements.path.value = '/r98/rule-2';
		f.requestSubmit()`)
	if err := wantText(panelText(ctx, t, "ul.tree"), "HTTPRoute app-3/route-98"); err != nil {
		t.Error(err)
	}
	nodes = graphNodes(ctx, t)
	for _, id := range []string{foldRoute, foldRule, foldSvc} {
		if !nodes[id].Marked {
			t.Errorf("trace: %s not drawn and marked: %+v", id, nodes[id])
		}
	}

	// Policy: the GatewayClass's policy reaches every backend: counted on
	// their holders; a Service's own policy draws and marks it.
	testFoldedReach(ctx, t)

	// A click on the route: its stack, and what it still holds drawn.
	js(ctx, t, `document.querySelector('#tabs button[data-view=graph]').click()`)
	js(ctx, t, fmt.Sprintf(`document.querySelector('#panel').replaceChildren(); window.epGraph.tap(%q)`, foldRoute))
	if err := wantText(panelText(ctx, t, "ul.tree"), "HTTPRoute app-3/route-98"); err != nil {
		t.Error(err)
	}
	nodes = graphNodes(ctx, t)
	if r := nodes[foldRoute]; r.Folded != 0 || strings.Contains(r.Label, "folded") {
		t.Errorf("the route after a click: %+v", r)
	}
	for _, id := range []string{"/Service/app-3/svc-8", "/Service/app-3/svc-88"} {
		if _, ok := nodes[id]; !ok {
			t.Errorf("%s not drawn after the click", id)
		}
	}
}

// choosePolicy shows the Policy view of the policy named label.
func choosePolicy(ctx context.Context, t *testing.T, label string) {
	t.Helper()
	js(ctx, t, `document.querySelector('#tabs button[data-view=reach]').click()`)
	if err := chromedp.Do(ctx, chromedp.WaitReady(`#reach-select option:nth-child(2)`)); err != nil {
		t.Fatal(err)
	}
	js(ctx, t, fmt.Sprintf(`document.querySelector('#panel').replaceChildren();
		const s = document.querySelector('#reach-select');
		s.value = [...s.options].find(o => o.text === %q).value;
		s.dispatchEvent(new Event('change'))`, label))
	if err := wantText(panelText(ctx, t, "ul.tree"), strings.TrimPrefix(label, "RetryPolicy ")); err != nil {
		t.Error(err)
	}
}

func testFoldedReach(ctx context.Context, t *testing.T) {
	t.Helper()
	// RetryPolicy gw-ns-0/p-00000 targets the GatewayClass: every backend.
	choosePolicy(ctx, t, "RetryPolicy gw-ns-0/p-00000")
	nodes := graphNodes(ctx, t)
	if _, ok := nodes["/Service/app-0/svc-0"]; ok {
		t.Error("svc-0 drawn for a policy that reaches every backend, want it counted")
	}
	counted := 0
	for _, n := range nodes {
		if n.Marked && strings.Contains(n.Label, "▶ inside: ") {
			counted++
		}
	}
	if counted == 0 {
		t.Error("no holder counts the folded targets the policy reaches")
	}
	// RetryPolicy app-3/p-00018 targets svc-13 alone: drawn and marked.
	choosePolicy(ctx, t, "RetryPolicy app-3/p-00018")
	if n := graphNodes(ctx, t)["/Service/app-3/svc-13"]; !n.Marked {
		t.Errorf("svc-13, the one target of its policy: %+v", n)
	}
}

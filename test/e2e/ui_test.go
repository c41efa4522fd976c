//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The demo's manifests (hack/demo): the topology of `make demo` and its policies.
var demoFiles = []string{"00-crds.yaml", "10-topology.yaml", "20-retry-all.yaml", "30-gateway.yaml", "40-route.yaml"}

const (
	demoGateway = "gateway.networking.k8s.io/Gateway/infra/cupcakes"
	demoRoute   = "gateway.networking.k8s.io/HTTPRoute/baker/baker"
)

// js runs a script in the page (one that returns true).
func js(ctx context.Context, t *testing.T, script string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("{"+script+"}; true")); err != nil {
		t.Fatalf("%s: %v", script, err)
	}
}

// TestUIOffline: `ui --offline -f hack/demo` in Chromium: every view draws
// what the demo's policies do, bad input gets the server's message, and a
// page without the token gets nothing. With UI_SCREENSHOTS=docs/ui it
// refreshes the README's pictures.
func TestUIOffline(t *testing.T) {
	dir := uiPlugin(t)
	u := startUI(t, dir, "-A", "--offline", "-f", "hack/demo")
	ctx := newBrowser(t)

	if ready := openPage(ctx, t, u); ready != "true" {
		t.Fatalf("page not ready: %s", ready)
	}
	nodes := graphNodes(ctx, t)
	gw, route := nodes[demoGateway], nodes[demoRoute]
	if !gw.Target || gw.Outcome != "enforced" || !strings.Contains(gw.Label, "3 Enforced") {
		t.Errorf("Gateway node: %+v", gw)
	}
	if !route.Target || route.Outcome != "partial" || !strings.Contains(route.Label, "1 PartiallyEnforced") {
		t.Errorf("HTTPRoute node: %+v", route)
	}
	screenshot(ctx, t, "gateways")

	// Target: a click shows the route's stack, each field with the policy that set it.
	js(ctx, t, fmt.Sprintf(`window.epGraph.tap(%q)`, demoRoute))
	if err := wantText(panelText(ctx, t, "ul.tree"), "HTTPRoute baker/baker", "request: 10s  ← baker/baker-timeouts", "partly superseded by baker/baker-timeouts"); err != nil {
		t.Error(err)
	}
	screenshot(ctx, t, "target")

	// Policy: the Gateway's timeouts reach the route, partly enforced there.
	js(ctx, t, `document.querySelector('#tabs button[data-view=reach]').click()`)
	if err := chromedp.Do(ctx, chromedp.WaitReady(`#reach-select option:nth-child(2)`)); err != nil {
		t.Fatal(err)
	}
	js(ctx, t, `document.querySelector('#panel').replaceChildren();
		const s = document.querySelector('#reach-select');
		s.value = [...s.options].find(o => o.text === 'TimeoutPolicy infra/gateway-timeouts').value;
		s.dispatchEvent(new Event('change'))`)
	if err := wantText(panelText(ctx, t, "ul.tree"), "infra/gateway-timeouts", "HTTPRoute baker/baker  PartiallyEnforced  Defaults"); err != nil {
		t.Error(err)
	}
	if n := graphNodes(ctx, t)[demoRoute]; !n.Marked || !strings.Contains(n.Label, "PartiallyEnforced (Defaults)") {
		t.Errorf("the reached route is not marked: %+v", n)
	}
	screenshot(ctx, t, "policy")

	// Request: the trace highlights the Gateway and the route; bad input is refused.
	traceForm(ctx, t, "baker.cupcakes.example", "")
	if err := wantText(panelText(ctx, t, "ul.tree"), "HTTPRoute baker/baker"); err != nil {
		t.Error(err)
	}
	marked := graphNodes(ctx, t)
	if !marked[demoGateway].Marked || !marked[demoRoute].Marked || marked["gateway.networking.k8s.io/HTTPRoute/baker/frosting"].Marked {
		t.Errorf("trace marks: gateway %v, route %v, frosting %v", marked[demoGateway].Marked, marked[demoRoute].Marked, marked["gateway.networking.k8s.io/HTTPRoute/baker/frosting"].Marked)
	}
	screenshot(ctx, t, "request")
	traceForm(ctx, t, "baker.cupcakes.example", "eighty")
	if err := wantText(panelText(ctx, t, ".error"), `port must be a number from 1 to 65535, not "eighty"`); err != nil {
		t.Error(err)
	}

	// The URL without its token: the page loads, the data does not.
	bare, _, _ := strings.Cut(u, "?")
	if ready := openPage(ctx, t, bare+"?token=wrong"); ready != "error" {
		t.Errorf("page with a wrong token: %s", ready)
	}
	if err := wantText(panelText(ctx, t, ".error"), "missing or wrong token"); err != nil {
		t.Error(err)
	}

	testHTMLExport(ctx, t, dir)
}

// traceForm fills in the Request view's form and submits it.
func traceForm(ctx context.Context, t *testing.T, host, port string) {
	t.Helper()
	js(ctx, t, fmt.Sprintf(`document.querySelector('#tabs button[data-view=trace]').click();
		document.querySelector('#panel').replaceChildren();
		const f = document.querySelector('#trace-form');
		f.elements.host.value = %q;
		f.elements.port.value = %q;
		f.requestSubmit()`, host, port))
}

// testHTMLExport: describe --html writes a page that opens from a file with
// no request to anywhere, and shows the graph and the stacks.
func testHTMLExport(ctx context.Context, t *testing.T, dir string) {
	file := filepath.Join(t.TempDir(), "describe.html")
	if _, errOut, err := runPlugin(dir, "describe", "httproutes", "-A", "--offline", "-f", "hack/demo", "--html", file); err != nil {
		t.Fatalf("describe --html: %v: %s", err, errOut)
	}
	if ready := openPage(ctx, t, "file://"+file); ready != "true" {
		t.Fatalf("--html page: %s", ready)
	}
	if n := graphNodes(ctx, t)[demoRoute]; n.Outcome != "partial" {
		t.Errorf("--html page's route: %+v", n)
	}
	if err := wantText(panelText(ctx, t, "ul.tree"), "kubectl effectivepolicy describe httproutes", "request: 10s  ← baker/baker-timeouts"); err != nil {
		t.Error(err)
	}
	requests, err := chromedp.Run(ctx, chromedp.Evaluate[int](`performance.getEntriesByType('resource').length`))
	if err != nil {
		t.Fatal(err)
	}
	if requests != 0 {
		t.Errorf("the --html page made %d requests", requests)
	}
	screenshot(ctx, t, "html-export")
}

// TestUIRBAC: `ui` against the cluster with the demo topology: the admin sees
// both namespaces; Ana (the view role in baker, as in `make demo`) sees baker's
// targets only, and asking for every namespace shows her the API's refusal.
func TestUIRBAC(t *testing.T) {
	dir := uiPlugin(t)
	applyDemo(t)
	ctx := newBrowser(t)

	admin := startUI(t, dir, "-A")
	eventually(t, 60*time.Second, "the admin's graph", func() error {
		if ready := openPage(ctx, t, admin); ready != "true" {
			return fmt.Errorf("page: %s", ready)
		}
		nodes := graphNodes(ctx, t)
		if !nodes[demoGateway].Target || nodes[demoRoute].Outcome != "partial" {
			return fmt.Errorf("nodes: %+v", nodes)
		}
		return nil
	})

	ana := startUI(t, dir, "-n", "baker", "--as", "ana")
	eventually(t, 60*time.Second, "Ana's graph", func() error {
		if ready := openPage(ctx, t, ana); ready != "true" {
			return fmt.Errorf("page: %s", ready)
		}
		nodes := graphNodes(ctx, t)
		if !nodes[demoRoute].Target {
			return fmt.Errorf("Ana does not see her route: %+v", nodes)
		}
		for _, n := range nodes {
			if n.Target && n.Namespace != "baker" {
				return fmt.Errorf("Ana sees the target %s outside baker", n.ID)
			}
		}
		return nil
	})
	screenshot(ctx, t, "rbac-ana")

	// Live: without the route's own timeouts, the Gateway's defaults are whole on the route;
	// the open page shows it without a reload.
	if ready := openPage(ctx, t, admin); ready != "true" {
		t.Fatalf("admin's page: %s", ready)
	}
	routePolicies := filepath.Join(repoRoot, "hack", "demo", "40-route.yaml")
	kubectl(t, "delete", "-f", routePolicies)
	eventually(t, 60*time.Second, "the live page", func() error {
		if n := graphNodes(ctx, t)[demoRoute]; n.Outcome != "enforced" || strings.Contains(n.Label, "PartiallyEnforced") {
			return fmt.Errorf("route not updated: %+v", n)
		}
		return nil
	})

	anaAll := startUI(t, dir, "-A", "--as", "ana")
	if ready := openPage(ctx, t, anaAll); ready != "error" {
		t.Errorf("Ana's page of every namespace: %s", ready)
	}
	if err := wantText(panelText(ctx, t, ".error"), "forbidden"); err != nil {
		t.Error(err)
	}
}

// applyDemo applies the demo (hack/demo) for one test and deletes it when the test ends, so
// that later tests see the cluster they expect. The deletion does not wait, so the next test
// to apply the demo first waits for the previous one's to finish: objects cannot be created in
// a namespace being terminated, nor a CRD re-created while its deletion runs.
func applyDemo(t *testing.T) {
	t.Helper()
	// The CRDs and the topology (its namespaces hold the rest) are kinds kubectl always knows.
	crds, topology := filepath.Join(repoRoot, "hack", "demo", demoFiles[0]), filepath.Join(repoRoot, "hack", "demo", demoFiles[1])
	eventually(t, 3*time.Minute, "an earlier test's demo deleted", func() error {
		if left := strings.TrimSpace(kubectl(t, "get", "--ignore-not-found", "-o", "name", "-f", crds, "-f", topology)); left != "" {
			return fmt.Errorf("still there: %s", strings.ReplaceAll(left, "\n", ", "))
		}
		return nil
	})
	t.Cleanup(func() {
		for i := len(demoFiles) - 1; i >= 0; i-- {
			kubectl(t, "delete", "--ignore-not-found", "--wait=false", "-f", filepath.Join(repoRoot, "hack", "demo", demoFiles[i]))
		}
	})
	for _, f := range demoFiles {
		kubectl(t, "apply", "-f", filepath.Join(repoRoot, "hack", "demo", f))
		if f == "00-crds.yaml" {
			waitCondition(t, "Established", "-f", filepath.Join(repoRoot, "hack", "demo", f))
		}
	}
}

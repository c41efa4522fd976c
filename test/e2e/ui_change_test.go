//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// changeForm fills in the Change view's form (apply and delete) and submits it.
func changeForm(ctx context.Context, t *testing.T, apply, del string) {
	t.Helper()
	a, _ := json.Marshal(apply)
	d, _ := json.Marshal(del)
	js(ctx, t, fmt.Sprintf(`document.querySelector('#tabs button[data-view=change]').click();
		document.querySelector('#panel').replaceChildren();
		const f = document.querySelector('#change-form');
		f.elements.apply.value = %s;
		f.elements.delete.value = %s;
		f.requestSubmit()`, a, d))
}

func demoManifest(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "hack", "demo", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestUIChangeOffline: the Change view of `ui --offline -f hack/demo` in
// Chromium: Ana's proposed timeout (hack/demo/proposed) marks her route and
// shows the field before -> after; deleting her policy marks the route
// too; bad YAML gets the server's message and clears the marks.
func TestUIChangeOffline(t *testing.T) {
	dir := uiPlugin(t)
	u := startUI(t, dir, "-A", "--offline", "-f", "hack/demo")
	ctx := newBrowser(t)
	if ready := openPage(ctx, t, u); ready != "true" {
		t.Fatalf("page not ready: %s", ready)
	}

	changeForm(ctx, t, demoManifest(t, "proposed/baker-timeouts-5s.yaml"), "")
	if err := wantText(panelText(ctx, t, "ul.tree"), "What the change would do", "1 EffectivePolicy would change.",
		"EffectivePolicy baker/baker  Modified", "HTTPRoute baker/baker", "request: 10s -> 5s  ← baker/baker-timeouts"); err != nil {
		t.Error(err)
	}
	nodes := graphNodes(ctx, t)
	if n := nodes[demoRoute]; !n.Marked || !strings.Contains(n.Label, "▶ changes") {
		t.Errorf("the changed route is not marked: %+v", n)
	}
	if nodes[demoGateway].Marked || nodes["gateway.networking.k8s.io/HTTPRoute/baker/frosting"].Marked {
		t.Errorf("unchanged targets marked: gateway %v, frosting %v", nodes[demoGateway].Marked, nodes["gateway.networking.k8s.io/HTTPRoute/baker/frosting"].Marked)
	}
	screenshot(ctx, t, "change")

	// Deleted by manifest: a KIND/NAME line would name the page's namespace,
	// "default" here (-A and no -n), as kubectl delete would.
	changeForm(ctx, t, "", demoManifest(t, "40-route.yaml"))
	if err := wantText(panelText(ctx, t, "ul.tree"), "HTTPRoute baker/baker", "10s -> 30s"); err != nil {
		t.Error(err)
	}
	if n := graphNodes(ctx, t)[demoRoute]; !n.Marked {
		t.Errorf("deleting the route's policy does not mark it: %+v", n)
	}

	changeForm(ctx, t, "kind: [unclosed\n", "")
	if err := wantText(panelText(ctx, t, ".error"), "apply: "); err != nil {
		t.Error(err)
	}
	if n := graphNodes(ctx, t)[demoRoute]; n.Marked {
		t.Errorf("a refused change leaves the marks: %+v", n)
	}
}

// TestUIChangeRBAC: the Change view against the cluster, as Ana (view in
// baker): a review of the Gateway's timeouts names the changes in baker and
// counts the Gateway's own EffectivePolicy in infra, which she may not read,
// without naming it.
func TestUIChangeRBAC(t *testing.T) {
	dir := uiPlugin(t)
	applyDemo(t)
	ctx := newBrowser(t)
	ana := startUI(t, dir, "-n", "baker", "--as", "ana")
	shorter := strings.Replace(demoManifest(t, "30-gateway.yaml"), "connect: 2s", "connect: 1s", 1)
	eventually(t, 60*time.Second, "Ana's review", func() error {
		if ready := openPage(ctx, t, ana); ready != "true" {
			return fmt.Errorf("page: %s", ready)
		}
		changeForm(ctx, t, shorter, "")
		text := panelText(ctx, t, "p")
		if err := wantText(text, "EffectivePolicy baker/baker", "2s -> 1s", "more where you may not read effectivepolicies"); err != nil {
			return err
		}
		if strings.Contains(text, "EffectivePolicy infra/") {
			return fmt.Errorf("Ana's review names a change in infra:\n%s", text)
		}
		if !graphNodes(ctx, t)[demoRoute].Marked {
			return fmt.Errorf("Ana's route is not marked")
		}
		return nil
	})
}

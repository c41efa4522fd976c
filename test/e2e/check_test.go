//go:build e2e

package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	checkInfra = "e2e-check-infra"
	checkApp   = "e2e-check-app"
)

// checkManifests: a Gateway with three routes attached, two of them public; only one public
// route has a ColorPolicy.
var checkManifests = fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: e2e-check}
spec: {controllerName: example.com/e2e-check}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: %[1]s}
spec:
  gatewayClassName: e2e-check
  listeners:
  - {name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop, namespace: %[2]s, labels: {tier: public}}
spec:
  parentRefs: [{name: gw, namespace: %[1]s}]
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: blog, namespace: %[2]s, labels: {tier: public}}
spec:
  parentRefs: [{name: gw, namespace: %[1]s}]
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: internal, namespace: %[2]s}
spec:
  parentRefs: [{name: gw, namespace: %[1]s}]
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: %[2]s}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: colors.example.com/v1
kind: ColorPolicy
metadata: {name: shop-red, namespace: %[2]s}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: shop}]
  color: red
  size: 5
`, checkInfra, checkApp)

// checkFix gives the blog route its ColorPolicy.
var checkFix = fmt.Sprintf(`
apiVersion: colors.example.com/v1
kind: ColorPolicy
metadata: {name: blog-blue, namespace: %[1]s}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: blog}]
  color: blue
  size: 8
`, checkApp)

var checkExpectations = fmt.Sprintf(`apiVersion: effectivepolicy.dev/v1alpha1
kind: Expectations
metadata: {name: e2e}
expectations:
- name: every public route on gw has a color
  targets:
    kind: HTTPRoute
    selector: {matchLabels: {tier: public}}
    attachedTo: {namespace: %[1]s, name: gw}
  policy:
    group: colors.example.com
    kind: ColorPolicy
    outcomes: [Enforced]
    fields:
    - {path: /color, exists: true}
    - {path: size, max: 10}
- name: nothing Conflicted or Invalid
  targets: {namespace: %[2]s}
  forbiddenOutcomes: [Conflicted, Invalid]
- name: public routes by label have a color
  targets:
    kind: HTTPRoute
    namespace: %[2]s
    selector: {matchLabels: {tier: public}}
  policy: {kind: ColorPolicy}
- name: a route no policy reaches is still a target
  targets: {group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: %[2]s, name: internal}
  policy: {kind: ColorPolicy, optional: true}
  allowAssumedSemantics: false
`, checkInfra, checkApp)

// TestCheck: kubectl effectivepolicy check against the cluster fails while a public route on
// the Gateway has no ColorPolicy, with the route named in the text, JSON and JUnit outputs,
// and holds once the route gets one; offline, the same manifests give the same answers; an
// unreachable cluster is exit status 2.
func TestCheck(t *testing.T) {
	dir := buildPlugin(t)
	applyColorPolicyCRDs(t)
	createNamespace(t, checkInfra)
	createNamespace(t, checkApp)
	kubectlApply(t, checkManifests)
	tmp := t.TempDir()
	expectations := writeFile(t, tmp, "expectations.yaml", checkExpectations)
	junit := filepath.Join(tmp, "report.xml")

	failing := []string{
		"PASS  every public route on gw has a color  HTTPRoute " + checkApp + "/shop",
		"FAIL  every public route on gw has a color  HTTPRoute " + checkApp + "/blog",
		"      no ColorPolicy.colors.example.com reaches it",
		"FAIL  public routes by label have a color  HTTPRoute " + checkApp + "/blog",
		"      no ColorPolicy reaches it",
		"PASS  a route no policy reaches is still a target  HTTPRoute " + checkApp + "/internal",
		"4 expectations, 7 checks: 5 hold, 2 fail.",
	}
	online := waitCheck(t, dir, 1, failing, "check", "-f", expectations, "--junit", junit)
	if strings.Contains(online, "color  HTTPRoute "+checkApp+"/internal") {
		t.Errorf("the route without the label was checked:\n%s", online)
	}
	if data, err := os.ReadFile(junit); err != nil || !strings.Contains(string(data), `<failure message="no ColorPolicy.colors.example.com reaches it"`) {
		t.Errorf("--junit: %v\n%s", err, data)
	}
	out, _, err := runPlugin(dir, "check", "-f", expectations, "-o", "json")
	var report struct {
		Summary struct{ Fail int } `json:"summary"`
	}
	if exitStatus(err) != 1 || json.Unmarshal([]byte(out), &report) != nil || report.Summary.Fail != 2 {
		t.Errorf("-o json: exit %d, %s", exitStatus(err), out)
	}

	// Offline, the same manifests give the same lines.
	manifests := writeFile(t, tmp, "manifests.yaml", checkManifests)
	crds := filepath.Join(repoRoot, colorCRDs)
	offline, _, err := runPlugin(dir, "check", "--offline", "-f", expectations, "-f", crds, "-f", manifests)
	if exitStatus(err) != 1 || offline != online {
		t.Errorf("offline: exit %d\n%s\nonline:\n%s", exitStatus(err), offline, online)
	}

	// The change: the blog route gets its ColorPolicy, and everything holds.
	kubectlApply(t, checkFix)
	waitCheck(t, dir, 0, []string{
		"PASS  every public route on gw has a color  HTTPRoute " + checkApp + "/blog",
		"PASS  public routes by label have a color  HTTPRoute " + checkApp + "/blog",
		"4 expectations, 8 checks: 8 hold, 0 fail.",
	}, "check", "-f", expectations)
	fix := writeFile(t, tmp, "fix.yaml", checkFix)
	if out, _, err := runPlugin(dir, "check", "--offline", "-f", expectations, "-f", crds, "-f", manifests, "-f", fix); exitStatus(err) != 0 {
		t.Errorf("offline with the change: exit %d\n%s", exitStatus(err), out)
	}

	// Could not evaluate: no cluster there.
	if _, errOut, err := runPlugin(dir, "check", "-f", expectations, "--server", "https://127.0.0.1:1", "--request-timeout", "5s"); exitStatus(err) != 2 || !strings.Contains(errOut, "127.0.0.1:1") {
		t.Errorf("an unreachable cluster: exit %d, %s", exitStatus(err), errOut)
	}
}

// waitCheck runs the plugin with args until it exits with status and prints every line of
// want (the server computes changes shortly after they land), and returns its output.
func waitCheck(t *testing.T, dir string, status int, want []string, args ...string) string {
	t.Helper()
	var out string
	eventually(t, 60*time.Second, "kubectl-effectivepolicy "+strings.Join(args, " "), func() error {
		var errOut string
		var err error
		out, errOut, err = runPlugin(dir, args...)
		if got := exitStatus(err); got != status {
			return fmt.Errorf("exit status %d, want %d: %s\n%s", got, status, errOut, out)
		}
		return wantLines(out, want...)
	})
	return out
}

// exitStatus is the exit status of a run (-1 when it did not run).
func exitStatus(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}

func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

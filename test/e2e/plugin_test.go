//go:build e2e

package e2e

import (
	"bytes"
	"context"
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
	pluginInfra = "e2e-plugin-infra"
	pluginApp   = "e2e-plugin-app"
	pluginHost  = "plugin.e2e.example"
)

// pluginManifests: a Gateway in infra with an overriding policy, a route in the application's
// namespace with a default, and a default on that Namespace (a ClusterEffectivePolicy), all at
// different levels so that no creationTimestamp decides anything (the offline run's
// timestamps are not the cluster's). The rule spells out the match the Gateway API CRD would
// default (offline, nothing applies CRD defaults).
var pluginManifests = fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: e2e-plugin}
spec: {controllerName: example.com/e2e-plugin}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: %[1]s}
spec:
  gatewayClassName: e2e-plugin
  listeners:
  - {name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app, namespace: %[2]s}
spec:
  parentRefs: [{name: gw, namespace: %[1]s}]
  hostnames: [%[3]s]
  rules:
  - matches: [{path: {type: PathPrefix, value: /}}]
    backendRefs: [{name: web, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: %[2]s}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: colors.example.com/v1
kind: ColorPolicy
metadata: {name: amber, namespace: %[1]s}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  overrides: {shade: amber, strategy: patch}
---
apiVersion: colors.example.com/v1
kind: ColorPolicy
metadata: {name: green, namespace: %[2]s}
spec:
  targetRefs: [{group: "", kind: Namespace, name: %[2]s}]
  color: green
---
apiVersion: colors.example.com/v1
kind: ColorPolicy
metadata: {name: blue, namespace: %[2]s}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: app}]
  color: blue
`, pluginInfra, pluginApp, pluginHost)

// buildPlugin builds kubectl-effectivepolicy into a temporary directory and returns that
// directory.
func buildPlugin(t *testing.T) string {
	t.Helper()
	dir := buildPluginTo(t, t.TempDir())
	if dir == "" {
		t.FailNow()
	}
	return dir
}

// buildPluginTo builds kubectl-effectivepolicy into dir and returns it ("" when the build
// failed, reported on t).
func buildPluginTo(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "kubectl-effectivepolicy"), "./cmd/kubectl-effectivepolicy")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("go build ./cmd/kubectl-effectivepolicy: %v\n%s", err, out)
		return ""
	}
	return dir
}

// runPlugin runs the plugin binary in dir against the local control plane.
func runPlugin(dir string, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "kubectl-effectivepolicy"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Dir = repoRoot
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// wantLines fails unless out holds every line of want (each as a substring of some line).
func wantLines(out string, want ...string) error {
	for _, w := range want {
		if !strings.Contains(out, w) {
			return fmt.Errorf("no %q in:\n%s", w, out)
		}
	}
	return nil
}

// TestPlugin: the kubectl plugin (docs/spec.md §11) against the cluster: describe a route, a Gateway
// and a Namespace, the reach of a policy and the trace of a request, as trees and as objects,
// through kubectl's plugin mechanism, and the same answers offline from the same manifests.
func TestPlugin(t *testing.T) {
	dir := buildPlugin(t)
	crds := filepath.Join(repoRoot, colorCRDs)
	applyColorPolicyCRDs(t)
	createNamespace(t, pluginInfra)
	createNamespace(t, pluginApp)
	kubectlApply(t, pluginManifests)

	route := "describe httproute/app -n " + pluginApp
	for _, c := range pluginChecks(route) {
		eventually(t, 60*time.Second, "kubectl-effectivepolicy "+c.args, func() error {
			out, errOut, err := runPlugin(dir, strings.Fields(c.args)...)
			if err != nil {
				return fmt.Errorf("%v: %s", err, errOut)
			}
			return wantLines(out, c.want...)
		})
	}

	// Through kubectl, which finds the plugin on PATH.
	cmd := exec.Command("kubectl", "effectivepolicy", "--kubeconfig", kubeconfig, "describe", "httproute/app", "-n", pluginApp)
	cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "color: blue  ← "+pluginApp+"/blue") {
		t.Errorf("kubectl effectivepolicy describe: %v\n%s", err, out)
	}

	// Errors: a target no policy reaches.
	if _, errOut, err := runPlugin(dir, "describe", "httproute/nope", "-n", pluginApp); err == nil || !strings.Contains(errOut, "no policy reaches HTTPRoute "+pluginApp+"/nope") {
		t.Errorf("describe of a target no policy reaches: %v, %s", err, errOut)
	}

	// Offline, from the same manifests: the same trees.
	manifests := filepath.Join(t.TempDir(), "plugin.yaml")
	if err := os.WriteFile(manifests, []byte(pluginManifests), 0o644); err != nil {
		t.Fatal(err)
	}
	checkPluginOfflineAsOnline(t, dir, crds, manifests, route)

	testPluginDiff(t, dir, crds, manifests)
}

// pluginCheck: kubectl-effectivepolicy with args prints each of want as a line.
type pluginCheck struct {
	args string
	want []string
}

// pluginAssumed ends the line of ColorPolicy, a kind found by its CRD's label alone
// (docs/spec.md §4.1, "Saying when we guess").
const pluginAssumed = "  semantics assumed (GEP fold; no descriptor describes this kind)"

// pluginChecks are the commands run against the cluster; route is the
// describe of the application's HTTPRoute.
func pluginChecks(route string) []pluginCheck {
	return []pluginCheck{
		{route, []string{
			"HTTPRoute " + pluginApp + "/app",
			"ColorPolicy.colors.example.com  Inherited" + pluginAssumed,
			"via Gateway " + pluginInfra + "/gw › Namespace " + pluginApp + " › HTTPRoute " + pluginApp + "/app",
			"color: blue  ← " + pluginApp + "/blue",
			"shade: amber  ← " + pluginInfra + "/amber",
			pluginApp + "/green  Overridden  Defaults (AtomicDefaults) on Namespace " + pluginApp,
			pluginApp + "/blue  Enforced  Defaults (AtomicDefaults) on HTTPRoute " + pluginApp + "/app",
		}},
		{"describe gateway/gw -n " + pluginInfra, []string{"Gateway " + pluginInfra + "/gw", "shade: amber  ← " + pluginInfra + "/amber"}},
		{"describe namespace/" + pluginApp, []string{"Namespace " + pluginApp, "color: green  ← " + pluginApp + "/green"}},
		{"describe httproute/app -n " + pluginApp + " -o yaml", []string{"kind: EffectivePolicy", "apiVersion: effectivepolicy.dev/v1alpha1", "/color: " + pluginApp + "/blue"}},
		{"reach colorpolicy/amber -n " + pluginInfra, []string{
			"ColorPolicy.colors.example.com " + pluginInfra + "/amber  Inherited" + pluginAssumed,
			"Gateway " + pluginInfra + "/gw  resolved",
			"summary: 3 targets: 3 Enforced",
			"hidden targets: 0",
			"HTTPRoute " + pluginApp + "/app  Enforced  Overrides",
			"Service " + pluginApp + "/web  Enforced  Overrides",
		}},
		{"trace --gateway " + pluginInfra + "/gw --host " + pluginHost + " --path /x", []string{
			"GET " + pluginHost + "/x through Gateway " + pluginInfra + "/gw",
			"listener http (port 80, HTTP, Precedence)  Matched",
			"HTTPRoute " + pluginApp + "/app",
			"rule 0",
			"backend Service " + pluginApp + "/web port 80 (weight 1)",
			"color: blue  ← " + pluginApp + "/blue",
		}},
		{"trace --gateway " + pluginInfra + "/gw --host " + pluginHost + " -o json", []string{`"kind": "RequestTrace"`, `"reason": "Matched"`}},
	}
}

// checkPluginOfflineAsOnline: describe, reach and trace print the same
// offline, from the CRDs and manifests, as against the cluster.
func checkPluginOfflineAsOnline(t *testing.T, dir, crds, manifests, route string) {
	t.Helper()
	for _, args := range [][]string{
		strings.Fields(route),
		strings.Fields("reach colorpolicy/amber -n " + pluginInfra),
		strings.Fields("trace --gateway " + pluginInfra + "/gw --host " + pluginHost),
	} {
		online, errOut, err := runPlugin(dir, args...)
		if err != nil {
			t.Fatalf("%v: %v: %s", args, err, errOut)
		}
		offline, errOut, err := runPlugin(dir, append(args, "--offline", "-f", crds, "-f", manifests)...)
		if err != nil {
			t.Fatalf("%v --offline: %v: %s", args, err, errOut)
		}
		if online != offline {
			t.Errorf("%v online:\n%s\noffline:\n%s", args, online, offline)
		}
	}
}

// testPluginDiff: kubectl effectivepolicy diff against the cluster (an EffectivePolicyReview):
// a proposed edit exits 1 and prints what changes, a delete too, the live manifests themselves
// exit 0; and diff --offline of the same sets prints what the cluster says.
func testPluginDiff(t *testing.T, dir, crds, manifests string) {
	edited := strings.Replace(pluginManifests, "  color: blue\n", "  color: red\n", 1)
	if edited == pluginManifests {
		t.Fatal("no blue policy to edit")
	}
	proposed := filepath.Join(t.TempDir(), "blue.yaml")
	if err := os.WriteFile(proposed, []byte(`apiVersion: colors.example.com/v1
kind: ColorPolicy
metadata: {name: blue}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: app}]
  color: red
`), 0o644); err != nil {
		t.Fatal(err)
	}
	exitStatus := func(err error) int {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			return -1
		}
		return 0
	}
	cases := []struct {
		args   []string
		status int
		want   []string
	}{
		// The policy names no namespace: -n gives it one, as kubectl apply does.
		{[]string{"diff", "-f", proposed, "-n", pluginApp}, 1, []string{
			"EffectivePolicy " + pluginApp + "/app  Modified",
			"HTTPRoute " + pluginApp + "/app",
			"color: blue -> red  ← " + pluginApp + "/blue",
			"EffectivePolicy " + pluginApp + "/web  Modified",
		}},
		{[]string{"diff", "--delete", "colorpolicies.colors.example.com/blue", "-n", pluginApp}, 1, []string{
			"color: blue -> green  ← " + pluginApp + "/blue -> " + pluginApp + "/green",
			"- " + pluginApp + "/blue  Enforced  Defaults (AtomicDefaults) on HTTPRoute " + pluginApp + "/app",
			pluginApp + "/green  Overridden -> Enforced",
		}},
		{[]string{"diff", "-f", proposed, "-n", pluginApp, "-o", "yaml"}, 1, []string{"kind: EffectivePolicyReview", "change: Modified", "color: red"}},
		// The live objects themselves: each keeps its creationTimestamp, nothing changes.
		{[]string{"diff", "-f", manifests}, 0, nil},
	}
	for _, c := range cases {
		out, errOut, err := runPlugin(dir, c.args...)
		if got := exitStatus(err); got != c.status {
			t.Errorf("%v: exit status %d, want %d\n%s%s", c.args, got, c.status, out, errOut)
			continue
		}
		if err := wantLines(out, c.want...); err != nil {
			t.Errorf("%v: %v", c.args, err)
		}
	}
	if _, errOut, err := runPlugin(dir, "diff", "-f", crds); exitStatus(err) != 2 || !strings.Contains(errOut, "nothing to review") {
		t.Errorf("diff of CRDs alone: %v, %s", err, errOut)
	}

	// Offline, the same change between two sets of manifests: the same answer.
	newSet := filepath.Join(t.TempDir(), "new.yaml")
	if err := os.WriteFile(newSet, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	online, _, err := runPlugin(dir, "diff", "-f", proposed, "-n", pluginApp)
	if exitStatus(err) != 1 {
		t.Fatalf("diff: %v", err)
	}
	offline, errOut, err := runPlugin(dir, "diff", "--offline", "-f", crds, manifests, newSet)
	if exitStatus(err) != 1 {
		t.Fatalf("diff --offline: %v: %s", err, errOut)
	}
	if online != offline {
		t.Errorf("diff online:\n%s\ndiff --offline:\n%s", online, offline)
	}
}

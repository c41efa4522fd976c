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

	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

const (
	reviewUsersInfra = "e2e-reviewu-infra"
	reviewUsersApp   = "e2e-reviewu-app"
	reviewUsersOther = "e2e-reviewu-other"
	reviewUsersAna   = "e2e-review-ana"
)

// reviewUsersManifests: two Gateways in infra, amber and teal by their policies; Ana's route in
// her namespace and another team's route in theirs, both on the amber Gateway.
var reviewUsersManifests = fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: amber, namespace: %[1]s}
spec:
  gatewayClassName: e2e-review
  listeners:
  - {name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: teal, namespace: %[1]s}
spec:
  gatewayClassName: e2e-review
  listeners:
  - {name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: colors.example.com/v1
kind: ColorPolicy
metadata: {name: amber, namespace: %[1]s}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: amber}]
  color: amber
---
apiVersion: colors.example.com/v1
kind: ColorPolicy
metadata: {name: teal, namespace: %[1]s}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: teal}]
  color: teal
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop, namespace: %[2]s}
spec:
  parentRefs: [{name: amber, namespace: %[1]s}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: billing, namespace: %[3]s}
spec:
  parentRefs: [{name: amber, namespace: %[1]s}]
`, reviewUsersInfra, reviewUsersApp, reviewUsersOther)

// TestReviewByNamespaceViewer: Ana, with nothing but a view RoleBinding in her namespace, previews
// her route's move to the teal Gateway with `kubectl effectivepolicy diff` (the plugin binary,
// online). Her manifests also hold a policy of another team's namespace: the answer names her
// route's change only and counts the rest.
func TestReviewByNamespaceViewer(t *testing.T) {
	dir := buildPlugin(t)
	applyColorPolicyCRDs(t)
	for _, ns := range []string{reviewUsersInfra, reviewUsersApp, reviewUsersOther} {
		createNamespace(t, ns)
	}
	kubectlApply(t, reviewUsersManifests)
	kubectl(t, "create", "rolebinding", "ana", "--clusterrole=view", "--user="+reviewUsersAna, "-n", reviewUsersApp)
	checkAnaRights(t)
	eventually(t, 60*time.Second, "the routes' EffectivePolicies", func() error {
		_, _, err := kubectlRaw(nil, "get", "effectivepolicy", "shop", "-n", reviewUsersApp)
		if err == nil {
			_, _, err = kubectlRaw(nil, "get", "effectivepolicy", "billing", "-n", reviewUsersOther)
		}
		return err
	})

	change := filepath.Join(t.TempDir(), "change.yaml")
	if err := os.WriteFile(change, []byte(fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop, namespace: %[2]s}
spec:
  parentRefs: [{name: teal, namespace: %[1]s}]
---
apiVersion: colors.example.com/v1
kind: ColorPolicy
metadata: {name: billing-red, namespace: %[3]s}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: billing}]
  color: red
`, reviewUsersInfra, reviewUsersApp, reviewUsersOther)), 0o644); err != nil {
		t.Fatal(err)
	}

	// The tree, as she reads it: her route turns teal; one more change she may not see.
	out, errOut, err := runPlugin(dir, "diff", "-f", change, "--as", reviewUsersAna)
	if pluginExitStatus(err) != 1 {
		t.Fatalf("diff as Ana: %v (want exit status 1: changes)\n%s%s", err, out, errOut)
	}
	if err := wantLines(out, "EffectivePolicy "+reviewUsersApp+"/shop  Modified", "color: amber -> teal", "1 more change"); err != nil {
		t.Error(err)
	}
	if strings.Contains(out, reviewUsersOther) || strings.Contains(out, "billing") {
		t.Errorf("Ana's answer names the other team's namespace or route:\n%s", out)
	}

	// The object: only her namespace is named, the other team's change is counted.
	out, errOut, err = runPlugin(dir, "diff", "-f", change, "--as", reviewUsersAna, "-o", "yaml")
	if pluginExitStatus(err) != 1 {
		t.Fatalf("diff -o yaml as Ana: %v\n%s", err, errOut)
	}
	var rv v1alpha1.EffectivePolicyReview
	if err := yaml.Unmarshal([]byte(out), &rv); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got := changesOf(rv.Status); got != "Modified "+reviewUsersApp+"/shop" || rv.Status.HiddenChanges != 1 {
		t.Errorf("Ana's review: %q, hidden %d; want her route's change, the other team's counted", got, rv.Status.HiddenChanges)
	}
	status, _ := json.Marshal(rv.Status)
	if strings.Contains(string(status), reviewUsersOther) {
		t.Errorf("Ana's review names %s: %s", reviewUsersOther, status)
	}

	// The cluster's admin, reviewing the same manifests, sees both changes named.
	out, errOut, err = runPlugin(dir, "diff", "-f", change)
	if pluginExitStatus(err) != 1 || !strings.Contains(out, "EffectivePolicy "+reviewUsersOther+"/billing  Modified") || strings.Contains(out, "more change") {
		t.Errorf("diff as the admin: %v\n%s%s", err, out, errOut)
	}
}

// checkAnaRights: Ana reads EffectivePolicies in her namespace only and may create reviews (the
// install's binding to system:authenticated); nothing cluster-wide.
func checkAnaRights(t *testing.T) {
	t.Helper()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "effectivepolicies.effectivepolicy.dev", "-n", reviewUsersApp}, "yes"},
		{[]string{"get", "effectivepolicies.effectivepolicy.dev", "-n", reviewUsersOther}, "no"},
		{[]string{"get", "clustereffectivepolicies.effectivepolicy.dev"}, "no"},
		{[]string{"create", "effectivepolicyreviews.effectivepolicy.dev"}, "yes"},
	} {
		eventually(t, 30*time.Second, "Ana's rights "+strings.Join(c.args, " "), func() error {
			out, _, _ := kubectlRaw(nil, append(append([]string{"auth", "can-i"}, c.args...), "--as", reviewUsersAna)...)
			if got := strings.TrimSpace(out); got != c.want {
				return fmt.Errorf("can-i %v: %q, want %q", c.args, got, c.want)
			}
			return nil
		})
	}
}

// pluginExitStatus is the exit status of a plugin run (-1: it did not run).
func pluginExitStatus(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

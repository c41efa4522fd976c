//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	versioned "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned"
)

// A small fixture with a known answer, shared by the fault tests (faults_*_test.go) and the
// paging test.
//
//
// The fixture of every fault test: a namespace with n Services svc-0..svc-<n-1> and one inherited
// ColorPolicy "fault-color" targeting all of them, so the expected answer is known without a
// second implementation: n EffectivePolicies svc-i, each with one Service target whose single
// ColorPolicy has the effective spec {"color":<color>}.

const colorCRDs = "test/scenarios/crds/colorpolicies.yaml"

// faultFixture creates the namespace (deleted when the test ends), its Services and the policy.
func faultFixture(t *testing.T, ns string, n int, color string) {
	t.Helper()
	applyColorPolicyCRDs(t)
	createNamespace(t, ns)
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Service\nmetadata: {name: svc-%d, namespace: %s}\nspec: {ports: [{name: http, port: 80}]}\n", i, ns)
	}
	kubectlApply(t, b.String())
	setColor(t, ns, n, color)
}

// setColor (re)applies the fixture's policy with color, targeting svc-0..svc-<n-1>.
func setColor(t *testing.T, ns string, n int, color string) {
	t.Helper()
	var refs []string
	for i := 0; i < n; i++ {
		refs = append(refs, fmt.Sprintf(`{group: "", kind: Service, name: svc-%d}`, i))
	}
	kubectlApply(t, fmt.Sprintf(`apiVersion: colors.example.com/v1
kind: ColorPolicy
metadata: {name: fault-color, namespace: %s}
spec:
  targetRefs: [%s]
  color: %s
`, ns, strings.Join(refs, ", "), color))
}

// checkColorItems checks a list of the fixture namespace against the expected answer.
func checkColorItems(items []v1alpha1.EffectivePolicy, n int, color string) error {
	want := fmt.Sprintf(`{"color":%q}`, color)
	var names []string
	for _, ep := range items {
		names = append(names, ep.Name)
		if len(ep.Targets) != 1 || ep.Targets[0].Kind != "Service" || len(ep.Targets[0].Policies) != 1 ||
			len(ep.Targets[0].Policies[0].Effective) != 1 {
			return fmt.Errorf("%s/%s: unexpected targets %+v", ep.Namespace, ep.Name, ep.Targets)
		}
		if got := string(ep.Targets[0].Policies[0].Effective[0].Spec.Raw); got != want {
			return fmt.Errorf("%s/%s: effective spec %s, want %s", ep.Namespace, ep.Name, got, want)
		}
	}
	sort.Strings(names)
	var wantNames []string
	for i := 0; i < n; i++ {
		wantNames = append(wantNames, fmt.Sprintf("svc-%d", i))
	}
	sort.Strings(wantNames)
	if fmt.Sprint(names) != fmt.Sprint(wantNames) {
		return fmt.Errorf("EffectivePolicies %v, want %v", names, wantNames)
	}
	return nil
}

// checkColors lists the fixture namespace through the aggregator with the generated clientset.
func checkColors(cs *versioned.Clientset, ns string, n int, color string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l, err := cs.EffectivepolicyV1alpha1().EffectivePolicies(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	return checkColorItems(l.Items, n, color)
}

// waitColors waits until the server answers the fixture's expected state.
func waitColors(t *testing.T, ns string, n int, color string) {
	t.Helper()
	cs := clientset(t, "")
	eventually(t, 90*time.Second, fmt.Sprintf("%d EffectivePolicies in %s with color %s", n, ns, color), func() error {
		return checkColors(cs, ns, n, color)
	})
}

// applyColorPolicyCRDs installs the scenarios' policy kinds (ColorPolicy, inherited and Direct)
// and waits until they are served.
func applyColorPolicyCRDs(t *testing.T) {
	t.Helper()
	crds := filepath.Join(repoRoot, colorCRDs)
	kubectl(t, "apply", "-f", crds)
	waitCondition(t, "Established", "-f", crds)
}

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func effectivePolicyNames(t *testing.T) ([]string, error) {
	t.Helper()
	l, err := clientset(t, "").EffectivepolicyV1alpha1().EffectivePolicies("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, ep := range l.Items {
		names = append(names, ep.Namespace+"/"+ep.Name)
	}
	sort.Strings(names)
	return names, nil
}

// Restarting our server (hack/local-up.sh restart-server) brings the API back through the
// aggregator, serving the same objects as before.
func TestRestartKeepsServing(t *testing.T) {
	before, err := effectivePolicyNames(t)
	if err != nil {
		t.Fatalf("list before restart: %v", err)
	}
	start := time.Now()
	cmd := exec.Command(filepath.Join(repoRoot, "hack", "local-up.sh"), "restart-server")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/local-up.sh restart-server: %v\n%s", err, out)
	}
	t.Logf("server restarted and answering through the aggregator in %s", time.Since(start).Round(time.Millisecond))

	kubectl(t, "get", "effectivepolicies", "-A")
	eventually(t, 60*time.Second, "same EffectivePolicies after restart", func() error {
		after, err := effectivePolicyNames(t)
		if err != nil {
			return err
		}
		if fmt.Sprint(after) != fmt.Sprint(before) {
			return fmt.Errorf("before restart %v, after %v", before, after)
		}
		return nil
	})
	eventually(t, 60*time.Second, "APIService Available", func() error {
		out, errOut, err := kubectlRaw(nil, "get", "apiservice", "v1alpha1.effectivepolicy.dev",
			"-o", `jsonpath={.status.conditions[?(@.type=="Available")].status}`)
		if err != nil || out != "True" {
			return fmt.Errorf("Available=%q %v %s", out, err, errOut)
		}
		return nil
	})
}

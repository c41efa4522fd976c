//go:build e2e

package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

func localUp(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(repoRoot, "hack", "local-up.sh"), args...)
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/local-up.sh %v: %v\n%s", args, err, out)
	}
}

// With a second replica behind the APIService, stopping the first one leaves the API answering
// (the kube-apiserver resolver skips replicas that do not accept connections).
func TestSecondReplicaKeepsServing(t *testing.T) {
	before, err := effectivePolicyNames(t)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	localUp(t, "start-replica", "1")
	t.Cleanup(func() {
		localUp(t, "start-server")
		localUp(t, "stop-replica", "1")
	})
	localUp(t, "stop-server")
	for i := 0; i < 5; i++ {
		kubectl(t, "get", "effectivepolicies", "-A")
	}
	eventually(t, 60*time.Second, "replica 1 serves the same EffectivePolicies", func() error {
		after, err := effectivePolicyNames(t)
		if err != nil {
			return err
		}
		if fmt.Sprint(after) != fmt.Sprint(before) {
			return fmt.Errorf("first replica %v, second %v", before, after)
		}
		return nil
	})
}

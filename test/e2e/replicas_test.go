//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func localUp(t *testing.T, args ...string) {
	t.Helper()
	localUpEnv(t, nil, args...)
}

// localUpEnv runs hack/local-up.sh with extra environment.
func localUpEnv(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(repoRoot, "hack", "local-up.sh"), args...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hack/local-up.sh %v (env %v): %v\n%s", args, env, err, out)
	}
	return string(out)
}

// With a second replica behind the APIService, stopping the first one leaves the API answering
// (the kube-apiserver resolver skips replicas that do not accept connections).
// A resourceVersion of the first replica is not resumed by the second: 410 Gone.
func TestSecondReplicaKeepsServing(t *testing.T) {
	before, err := effectivePolicyNames(t)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	// Only replica 0 runs: this list is its.
	l0, err := clientset(t, "").EffectivepolicyV1alpha1().EffectivePolicies("").List(context.Background(), metav1.ListOptions{})
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
	eventually(t, 30*time.Second, "replica 1 answers a watch from replica 0's resourceVersion "+l0.ResourceVersion+" with 410 Gone", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		w, err := clientset(t, "").EffectivepolicyV1alpha1().EffectivePolicies("").Watch(ctx, metav1.ListOptions{ResourceVersion: l0.ResourceVersion})
		if err == nil {
			// The error may also come as the first event.
			defer w.Stop()
			select {
			case e, ok := <-w.ResultChan():
				if !ok {
					return fmt.Errorf("watch closed without an event")
				}
				if st, isStatus := e.Object.(*metav1.Status); isStatus {
					err = apierrors.FromObject(st)
				} else {
					t.Fatalf("watch from replica 0's resourceVersion was resumed: %s %T", e.Type, e.Object)
				}
			case <-ctx.Done():
				t.Fatalf("watch from replica 0's resourceVersion was resumed (no error within 10s)")
			}
		}
		if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
			return fmt.Errorf("want 410 Gone, got %v", err)
		}
		if !strings.Contains(err.Error(), "another server instance") {
			t.Fatalf("410 for another reason: %v", err)
		}
		return nil
	})
}

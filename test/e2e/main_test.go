//go:build e2e

// Package e2e tests the EffectivePolicy API server end to end: a real etcd, kube-apiserver and
// kube-controller-manager (hack/local-up.sh), our server behind an APIService, and kubectl.
//
// Run with hack/e2e.sh (`make test-e2e`), which brings the control plane up once, runs
// `go test -tags e2e ./test/e2e/...` and tears it down. Run directly, TestMain brings the control
// plane up itself when .local/kubeconfig does not answer, and leaves it running.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	versioned "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned"
)

var (
	repoRoot   string
	kubeconfig string
)

func TestMain(m *testing.M) {
	_, file, _, _ := runtime.Caller(0)
	repoRoot = filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	local := os.Getenv("EP_LOCAL_DIR")
	if local == "" {
		local = filepath.Join(repoRoot, ".local")
	}
	kubeconfig = filepath.Join(local, "kubeconfig")
	if _, _, err := kubectlRaw(nil, "get", "effectivepolicies", "-A", "--request-timeout=10s"); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: control plane not answering; running hack/local-up.sh")
		cmd := exec.Command(filepath.Join(repoRoot, "hack", "local-up.sh"))
		cmd.Dir = repoRoot
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: hack/local-up.sh failed:", err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

// kubectlRaw runs kubectl against the local control plane, with stdin when given.
func kubectlRaw(stdin []byte, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Dir = repoRoot
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// kubectl runs kubectl and fails the test when it fails.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := kubectlRaw(nil, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// waitCondition waits until every object `kubectl get args...` names has the condition with
// status True, through hack/wait-condition.sh, the project's one way to wait (an object created a
// moment ago and without status yet is waited for, where `kubectl wait` errors).
func waitCondition(t *testing.T, condition string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	script := filepath.Join(repoRoot, "hack", "wait-condition.sh")
	cmd := exec.CommandContext(ctx, script, append([]string{"--timeout", "120", condition, "--kubeconfig", kubeconfig}, args...)...)
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("waiting for %s on %s: %v\n%s", condition, strings.Join(args, " "), err, out)
	}
}

// kubectlApply applies YAML from memory.
func kubectlApply(t *testing.T, yaml string, extra ...string) {
	t.Helper()
	args := append([]string{"apply", "-f", "-"}, extra...)
	if out, errOut, err := kubectlRaw([]byte(yaml), args...); err != nil {
		t.Fatalf("kubectl apply: %v\nstdout: %s\nstderr: %s\ninput:\n%s", err, out, errOut, yaml)
	}
}

func restConfig(t *testing.T) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatalf("loading %s: %v", kubeconfig, err)
	}
	return cfg
}

// clientset returns the generated clientset, impersonating user (and groups) when user != "".
func clientset(t *testing.T, user string, groups ...string) *versioned.Clientset {
	t.Helper()
	cfg := restConfig(t)
	if user != "" {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	}
	cs, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("clientset: %v", err)
	}
	return cs
}

// eventually polls f until it returns nil or the timeout passes, then fails with f's last error.
func eventually(t *testing.T, timeout time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for {
		if err = f(); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after %s: %v", what, timeout, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// createNamespace creates a fresh namespace and deletes it when the test ends. The cleanup waits
// until the namespace is gone and the server lists no EffectivePolicy in it any more: a namespace
// still draining, or outputs the server has not dropped yet, would otherwise show up in the next
// test's cluster-wide lists (and vanish in the middle of that test).
func createNamespace(t *testing.T, name string) {
	t.Helper()
	_, _, _ = kubectlRaw(nil, "delete", "namespace", name, "--ignore-not-found", "--wait=true", "--timeout=60s")
	kubectl(t, "create", "namespace", name)
	t.Cleanup(func() {
		_, _, _ = kubectlRaw(nil, "delete", "namespace", name, "--wait=true", "--timeout=120s")
		cs := clientset(t, "")
		eventually(t, time.Minute, "the EffectivePolicies of deleted namespace "+name+" gone", func() error {
			l, err := cs.EffectivepolicyV1alpha1().EffectivePolicies(name).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				return err
			}
			if len(l.Items) > 0 {
				return fmt.Errorf("%d left", len(l.Items))
			}
			return nil
		})
	})
}

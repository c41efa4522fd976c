package integration

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
)

// TestKubectl drives the server with the real kubectl:
// short names, the table columns, and `kubectl explain` (OpenAPI v3).
func TestKubectl(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatal("kubectl not found on PATH: these tests drive the real kubectl (preinstalled at /usr/bin/kubectl on the project machines)")
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: baseConfig.Host, InsecureSkipTLSVerify: true}
	cfg.AuthInfos["test"] = &clientcmdapi.AuthInfo{Token: "unused"} // authentication is off
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test"}
	cfg.CurrentContext = "test"
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	cacheDir := t.TempDir()

	epStore.Apply([]change{ep("kubectl", "baker", nil,
		target("HTTPRoute", "baker", policyKind("RetryPolicy", "kubectl/r1", "kubectl/r2")))})
	cepStore.Apply([]change{{Name: "kubectl-gc", Object: encoded.MustNew(&v1alpha1.ClusterEffectivePolicy{
		Targets: []v1alpha1.Target{target("GatewayClass", "kubectl-gc", policyKind("ColorPolicy", "/c1"))},
	})}})

	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"get", "effpol", "-n", "kubectl"}, []string{"NAME", "TARGETS", "POLICIES", "KINDS", "ASSUMED", "AGE", "baker", "HTTPRoute", "2", "RetryPolicy", "<none>"}},
		{[]string{"get", "effectivepolicy", "baker", "-n", "kubectl", "-o", "yaml"}, []string{"kind: EffectivePolicy", "resourceVersion:", "name: r2"}},
		{[]string{"get", "ceffpol", "kubectl-gc"}, []string{"NAME", "kubectl-gc", "GatewayClass", "1", "ColorPolicy"}},
		{[]string{"get", "gateway-api", "-n", "kubectl"}, []string{"effectivepolicy.effectivepolicy.dev/baker"}},
		{[]string{"explain", "effectivepolicies.targets.policies.sources"}, []string{"KIND:", "EffectivePolicy", "attachedTo", "mergeStrategy", "outcome"}},
		{[]string{"explain", "clustereffectivepolicy.targets.policies.effective.fieldSources"}, []string{"ClusterEffectivePolicy", "JSON pointer"}},
		{[]string{"api-resources", "--api-group=effectivepolicy.dev"}, []string{"effectivepolicies", "effpol", "EffectivePolicy", "clustereffectivepolicies", "ceffpol",
			"policyreaches", "polreach", "PolicyReach", "clusterpolicyreaches", "cpolreach"}},
		{[]string{"explain", "policyreaches.policies"}, []string{"KIND:", "PolicyReach", "attachedTo", "hiddenTargets", "reaches", "summary"}},
		{[]string{"get", "polreach", "-n", "kubectl"}, []string{"No resources found"}},
		{[]string{"explain", "effectivepolicyreview.status.changes"}, []string{"KIND:", "EffectivePolicyReview", "before", "after", "change", "resource"}},
		{[]string{"explain", "requesttrace.status.matches"}, []string{"KIND:", "RequestTrace", "backendPolicies", "hostnameMatching", "listener", "rule"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cmd := exec.Command(kubectl, append([]string{"--kubeconfig", kubeconfig, "--cache-dir", cacheDir}, tc.args...)...)
			cmd.Env = append(os.Environ(), "KUBECTL_EXPLAIN_OPENAPIV3=true")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}

	t.Run("get --watch", func(t *testing.T) {
		var out syncBuffer
		cmd := exec.Command(kubectl, "--kubeconfig", kubeconfig, "--cache-dir", cacheDir,
			"get", "effpol", "-n", "kubectl", "--watch", "--output-watch-events")
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		time.Sleep(time.Second)
		epStore.Apply([]change{ep("kubectl", "watched", nil, target("Gateway", "watched"))})
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(out.String(), "watched") && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if got := out.String(); !strings.Contains(got, "ADDED") || !strings.Contains(got, "baker") || !strings.Contains(got, "watched   Gateway") {
			t.Errorf("watch output:\n%s", got)
		}
	})
}

// syncBuffer is a bytes.Buffer that a command writes while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

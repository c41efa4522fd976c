package trace

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/measure"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/report"
)

// kubectlReps: each kubectl command costs a process start; a few runs
// give a median without making the measurement long.
const kubectlReps = 5

// kubectlTrace times `kubectl get httproute -o yaml` and `kubectl create
// -f trace.yaml -o yaml` (with and without client-side validation), and
// `kubectl effectivepolicy trace` when pluginDir holds the plugin, reps
// interleaved runs each after an unmeasured one, into r.
func kubectlTrace(ctx context.Context, kubeconfig, pluginDir string, in *v1alpha1.RequestTrace, rNS, rName string, reps int, r *report.TraceResult) error {
	dir, err := os.MkdirTemp("", "e2ebench-trace")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	in = in.DeepCopy()
	in.APIVersion, in.Kind = v1alpha1.SchemeGroupVersion.String(), "RequestTrace"
	doc, err := json.Marshal(in) // JSON is YAML
	if err != nil {
		return err
	}
	file := filepath.Join(dir, "trace.yaml")
	if err := os.WriteFile(file, doc, 0o644); err != nil {
		return err
	}
	// Kubernetes' own create-only kind, for reference: kubectl's default
	// validation costs it the same.
	ssar := filepath.Join(dir, "ssar.yaml")
	ssarDoc := fmt.Sprintf(`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"verb":"get","group":"gateway.networking.k8s.io","resource":"httproutes","namespace":%q,"name":%q}}}`, rNS, rName)
	if err := os.WriteFile(ssar, []byte(ssarDoc), 0o644); err != nil {
		return err
	}
	cmds := [][]string{
		{"get", "httproute", rName, "-n", rNS, "-o", "yaml"},
		{"create", "-f", file, "-o", "yaml"},
		{"create", "-f", file, "-o", "yaml", "--validate=false"},
		{"create", "-f", ssar, "-o", "yaml"},
		{"create", "-f", ssar, "-o", "yaml", "--validate=false"},
	}
	env := os.Environ()
	if pluginDir != "" {
		// kubectl finds its plugins on PATH.
		abs, err := filepath.Abs(pluginDir)
		if err != nil {
			return err
		}
		env = append(env, "PATH="+abs+string(filepath.ListSeparator)+os.Getenv("PATH"))
		g := in.Spec.Gateway
		cmds = append(cmds, []string{"effectivepolicy", "trace", "--gateway", g.Namespace + "/" + g.Name,
			"--host", in.Spec.Request.Host, "--path", in.Spec.Request.Path})
	}
	times := make([][]float64, len(cmds))
	for i := -1; i < reps; i++ {
		for c, args := range cmds {
			t0 := time.Now()
			// The flag goes last: kubectl looks for a plugin only among the
			// arguments before the first flag.
			cmd := exec.CommandContext(ctx, "kubectl", append(append([]string(nil), args...), "--kubeconfig", kubeconfig)...)
			cmd.Env = env
			if _, err := cmd.Output(); err != nil {
				return fmt.Errorf("kubectl %v: %w", args, err)
			}
			if i >= 0 {
				times[c] = append(times[c], msOf(time.Since(t0)))
			}
		}
	}
	r.KubectlReps = reps
	r.KubectlGetMs, r.KubectlCreateMs, r.KubectlCreateNoValidateMs = measure.Median(times[0]), measure.Median(times[1]), measure.Median(times[2])
	r.KubectlRatio = r.KubectlCreateMs / r.KubectlGetMs
	r.KubectlSSARMs, r.KubectlSSARNoValidateMs = measure.Median(times[3]), measure.Median(times[4])
	if pluginDir != "" {
		r.KubectlPluginMs = measure.Median(times[5])
	}
	return nil
}

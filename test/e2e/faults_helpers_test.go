//go:build e2e && long

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	versioned "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned"
)

// Shared helpers of the fault-injection tests (faults_*_test.go, `make test-long`).
//
// The fixture of every fault test: a namespace with n Services svc-0..svc-<n-1> and one inherited
// ColorPolicy "fault-color" targeting all of them, so the expected answer is known without a
// second implementation: n EffectivePolicies svc-i, each with one Service target whose single
// ColorPolicy has the effective spec {"color":<color>}.

const colorCRDs = "test/scenarios/crds/colorpolicies.yaml"

// faultFixture creates the namespace (deleted when the test ends), its Services and the policy.
func faultFixture(t *testing.T, ns string, n int, color string) {
	t.Helper()
	crds := filepath.Join(repoRoot, colorCRDs)
	kubectl(t, "apply", "-f", crds)
	kubectl(t, "wait", "--for", "condition=Established", "--timeout=60s", "-f", crds)
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

// pidOf returns the pid hack/local-up.sh recorded for a component (0 when none).
func pidOf(t *testing.T, name string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(localDir(), "run", name+".pid"))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file of %s: %v", name, err)
	}
	return pid
}

// processAlive reports whether pid exists (and is not a zombie we would have reaped).
func processAlive(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) == nil
}

// serverRunning reports whether our server's recorded process is alive.
func serverRunning(t *testing.T) bool {
	return processAlive(pidOf(t, "effectivepolicy-apiserver"))
}

// restoreServer is the fault tests' cleanup: our server running normally (no tmpfs) on its port,
// no extra replicas, so that the tests run in any order.
func restoreServer(t *testing.T) {
	t.Helper()
	localUpEnv(t, []string{"EP_CACHE_TMPFS="}, "restart-server")
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

// serverPort returns our server's port (SERVER_PORT) or replica n's (n > 0).
func serverPort(t *testing.T, replica int) string {
	t.Helper()
	if replica > 0 {
		b, err := os.ReadFile(filepath.Join(localDir(), fmt.Sprintf("replica-%d.port", replica)))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	return localPort(t, "SERVER_PORT")
}

// metricValue returns the value of an unlabelled sample (or of the first sample whose line starts
// with name, labels included) in a Prometheus text exposition; -1 when absent.
func metricValue(body, name string) float64 {
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `(?:\{[^}]*\})? ([0-9.eE+-]+)$`)
	m := re.FindStringSubmatch(body)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return -1
	}
	return v
}

// serverMetric scrapes one metric from a server port.
func serverMetric(t *testing.T, port, name string) (float64, error) {
	t.Helper()
	code, body, err := serverHTTP(t, port, "/metrics")
	if err != nil {
		return 0, err
	}
	if code != http.StatusOK {
		return 0, fmt.Errorf("/metrics: %d %s", code, body)
	}
	v := metricValue(body, name)
	if v < 0 {
		return 0, fmt.Errorf("no %s in /metrics", name)
	}
	return v, nil
}

// serverLogSinceStart returns our server's log since its last start (local-up.sh writes a
// "=== <time> <command>" line before every start).
func serverLogSinceStart(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(localDir(), "logs", "effectivepolicy-apiserver.log"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if i := strings.LastIndex(s, "\n=== "); i >= 0 {
		s = s[i+1:]
	}
	return s
}

var restoredRE = regexp.MustCompile(`"Restored outputs from cache" resource="(\w+)" objects=(\d+)`)

// restoredObjects returns, per resource, how many outputs the running server restored from its
// cache at start, from its log.
func restoredObjects(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, m := range restoredRE.FindAllStringSubmatch(serverLogSinceStart(t), -1) {
		n, _ := strconv.Atoi(m[2])
		out[m[1]] = n
	}
	return out
}

// epochOf is the epoch part of one of our resourceVersions (docs/storage.md: epoch << 40 | counter).
func epochOf(rv string) uint64 {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return 0
	}
	return n >> 40
}

// rvNumber parses a resourceVersion.
func rvNumber(t *testing.T, rv string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", rv, err)
	}
	return n
}

// inServerMountNS runs a command in our server's mount namespace (EP_CACHE_TMPFS), where its cache
// directory is the tmpfs.
func inServerMountNS(t *testing.T, args ...string) (string, error) {
	t.Helper()
	pid := pidOf(t, "effectivepolicy-apiserver")
	if pid == 0 {
		t.Fatal("our server is not running")
	}
	cmd := exec.Command("nsenter", append([]string{"-t", strconv.Itoa(pid), "-m", "--"}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

//go:build e2e && long

package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Shared helpers of the fault-injection tests (faults_*_test.go, `make test-long`); their fixture
// is in fixtures_test.go.

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

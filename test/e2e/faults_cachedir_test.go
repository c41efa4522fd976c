//go:build e2e && long

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/cache"
)

// TestLongCacheDirFaults makes the server's cache directory unusable: full while the server runs,
// or read-only from the start. Tests run as root, for whom chmod stops nothing, so the server is
// started in its own mount namespace with a small tmpfs on its cache directory
// (hack/local-up.sh EP_CACHE_TMPFS), which the test fills or remounts with nsenter. (A read-only
// remount of a file system on which bbolt holds its file open for writing is refused by the
// kernel with EBUSY, so "read-only" can only happen before the file is open: at start.)
//
// For each case it proves that:
//   - the server keeps serving correct answers from memory, also for changes made while the
//     directory is unusable, and does not crash;
//   - /readyz still passes (a replica on a full disk stays in service), while
//     /readyz/effectivepolicy-cache answers 500 with the reason (ENOSPC / EROFS);
//   - effectivepolicy_cache_degraded is 1 and effectivepolicy_cache_write_failures_total > 0;
//   - once the directory is usable again (space freed; remounted read-write, which the server
//     notices by retrying with back-off) the degradation clears and the file holds exactly the
//     served state: same epoch, same resourceVersion, every object.
func TestLongCacheDirFaults(t *testing.T) {
	cacheDir := filepath.Join(localDir(), "cache")
	t.Cleanup(func() { restoreServer(t) })
	for _, tc := range cacheDirFaults(cacheDir) {
		t.Run(tc.name, func(t *testing.T) { testCacheDirFault(t, cacheDir, tc) })
	}
}

// cacheDirFault: the server restarted with its cache directory a tmpfs
// mounted with the options tmpfs, broken by breakDir, failing writes with
// reason, and fixed by fixDir.
type cacheDirFault struct {
	name     string
	ns       string
	tmpfs    string
	breakDir []string // run in the server's mount namespace after it started ("" = nothing)
	reason   string
	fixDir   []string
}

func cacheDirFaults(cacheDir string) []cacheDirFault {
	return []cacheDirFault{
		{
			name:     "full on a live server",
			ns:       "e2e-fault-cache-full",
			tmpfs:    "size=1m",
			breakDir: []string{"sh", "-c", "dd if=/dev/zero of=" + cacheDir + "/fill bs=4k 2>/dev/null; true"},
			reason:   "no space left on device",
			fixDir:   []string{"rm", "-f", cacheDir + "/fill"},
		},
		{
			name:   "read-only at start",
			ns:     "e2e-fault-cache-ro",
			tmpfs:  "ro,size=1m",
			reason: "read-only file system",
			fixDir: []string{"mount", "-o", "remount,rw", cacheDir},
		},
	}
}

// testCacheDirFault: while the directory is unusable the server serves every
// change and reports the degradation; fixed, it writes again and its cache
// file holds what it serves.
func testCacheDirFault(t *testing.T, cacheDir string, tc cacheDirFault) {
	ns := tc.ns
	localUpEnv(t, []string{"EP_CACHE_TMPFS=" + tc.tmpfs}, "restart-server")
	if out, err := inServerMountNS(t, "findmnt", "-n", "-o", "FSTYPE,OPTIONS", cacheDir); err != nil || !strings.HasPrefix(out, "tmpfs") {
		t.Fatalf("no tmpfs on %s in the server's mount namespace: %v %s", cacheDir, err, out)
	}
	port := serverPort(t, 0)
	faultFixture(t, ns, 3, "blue")
	waitColors(t, ns, 3, "blue")
	if tc.breakDir != nil {
		if out, err := inServerMountNS(t, tc.breakDir...); err != nil {
			t.Fatalf("%v: %v %s", tc.breakDir, err, out)
		}
	}

	// Changes while the directory is unusable: 37 more Services, 40 outputs.
	var b strings.Builder
	for i := 3; i < 40; i++ {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Service\nmetadata: {name: svc-%d, namespace: %s}\nspec: {ports: [{name: http, port: 80}]}\n", i, ns)
	}
	kubectlApply(t, b.String())
	setColor(t, ns, 40, "green")
	waitColors(t, ns, 40, "green")

	eventually(t, 30*time.Second, "degradation reported", func() error {
		return cacheDegradedFor(t, port, tc.reason)
	})
	code, body, err := serverHTTP(t, port, "/readyz?verbose")
	if err != nil || code != 200 || !strings.Contains(body, "[+]effectivepolicy-cache ok") {
		t.Fatalf("/readyz?verbose while degraded: %d %v\n%s", code, err, body)
	}
	if !serverRunning(t) {
		t.Fatal("server died")
	}
	writesBefore, _ := serverMetric(t, port, "effectivepolicy_cache_writes_total")

	if out, err := inServerMountNS(t, tc.fixDir...); err != nil {
		t.Fatalf("%v: %v %s", tc.fixDir, err, out)
	}
	setColor(t, ns, 40, "orange") // the next write (after a failed one: a full rewrite)
	waitColors(t, ns, 40, "orange")
	eventually(t, 90*time.Second, "degradation cleared", func() error {
		return cacheRecoveredSince(t, port, writesBefore)
	})
	eventually(t, 60*time.Second, "the cache file holds the served state", func() error {
		return cacheFileMatchesServed(t, cacheDir)
	})
	if !serverRunning(t) {
		t.Fatal("server died")
	}
}

// cacheDegradedFor: the metrics report the cache degraded after a failed
// write, and its readyz check fails for reason.
func cacheDegradedFor(t *testing.T, port, reason string) error {
	if v, err := serverMetric(t, port, "effectivepolicy_cache_degraded"); err != nil || v != 1 {
		return fmt.Errorf("effectivepolicy_cache_degraded = %v (%v)", v, err)
	}
	if v, err := serverMetric(t, port, "effectivepolicy_cache_write_failures_total"); err != nil || v < 1 {
		return fmt.Errorf("effectivepolicy_cache_write_failures_total = %v (%v)", v, err)
	}
	code, body, err := serverHTTP(t, port, "/readyz/effectivepolicy-cache")
	if err != nil || code != 500 || !strings.Contains(body, reason) {
		return fmt.Errorf("/readyz/effectivepolicy-cache: %d %v %q, want 500 with %q", code, err, body, reason)
	}
	return nil
}

// cacheRecoveredSince: the cache is no longer degraded, has been written
// since the writes counter read writesBefore, and its readyz check passes.
func cacheRecoveredSince(t *testing.T, port string, writesBefore float64) error {
	if v, err := serverMetric(t, port, "effectivepolicy_cache_degraded"); err != nil || v != 0 {
		return fmt.Errorf("effectivepolicy_cache_degraded = %v (%v)", v, err)
	}
	if v, err := serverMetric(t, port, "effectivepolicy_cache_writes_total"); err != nil || v <= writesBefore {
		return fmt.Errorf("effectivepolicy_cache_writes_total = %v (%v), was %v", v, err, writesBefore)
	}
	code, body, err := serverHTTP(t, port, "/readyz/effectivepolicy-cache")
	if err != nil || code != 200 {
		return fmt.Errorf("/readyz/effectivepolicy-cache: %d %v %q", code, err, body)
	}
	return nil
}

// cacheFileMatchesServed copies the cache file out of the server's mount namespace, validates it
// as the server would at start, and compares it with what the server serves.
func cacheFileMatchesServed(t *testing.T, cacheDir string) error {
	t.Helper()
	cmd := exec.Command("nsenter", "-t", strconv.Itoa(pidOf(t, "effectivepolicy-apiserver")), "-m", "--", "cat", filepath.Join(cacheDir, cache.FileName))
	data, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("reading the cache file: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, cache.FileName), data, 0o600); err != nil {
		t.Fatal(err)
	}
	db, loaded, discarded, err := cache.Open(dir, encoded.CacheFormat, []string{"effectivepolicies", "clustereffectivepolicies"}, nil)
	if err != nil || discarded != nil {
		return fmt.Errorf("the cache file does not open: %v %v", err, discarded)
	}
	defer db.Close()
	l, err := clientset(t, "").EffectivepolicyV1alpha1().EffectivePolicies("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err
	}
	got := loaded["effectivepolicies"]
	if strconv.FormatUint(got.ResourceVersion, 10) != l.ResourceVersion || len(got.Entries) != len(l.Items) {
		return fmt.Errorf("file: %d objects at resourceVersion %d (epoch %d); served: %d at %s",
			len(got.Entries), got.ResourceVersion, db.Epoch(), len(l.Items), l.ResourceVersion)
	}
	if uint64(db.Epoch()) != epochOf(l.ResourceVersion) {
		return fmt.Errorf("file epoch %d, served %d", db.Epoch(), epochOf(l.ResourceVersion))
	}
	return nil
}

//go:build e2e && long

package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLongCorruptCache damages the bbolt cache file while the server is stopped and starts it
// again. For each kind of damage it proves that:
//   - the server starts (no crash) and serves correct answers;
//   - the damaged file is moved aside byte for byte to effectivepolicy.db.corrupt (never served,
//     never silently deleted), the log says why, effectivepolicy_cache_discarded_total is 1 and
//     the server restored nothing from it;
//   - the new file starts a new epoch (old resourceVersions are foreign: clients relist);
//   - the rebuilt file is good: after one more restart the server restores every output from it.
func TestLongCorruptCache(t *testing.T) {
	const ns, n = "e2e-fault-corrupt", 4
	faultFixture(t, ns, n, "cyan")
	waitColors(t, ns, n, "cyan")
	t.Cleanup(func() {
		if !serverRunning(t) {
			restoreServer(t)
		}
	})
	dbPath := filepath.Join(localDir(), "cache", "effectivepolicy.db")
	cs := clientset(t, "")

	for _, tc := range cacheDamages() {
		t.Run(tc.name, func(t *testing.T) {
			before, err := cs.EffectivepolicyV1alpha1().EffectivePolicies("").List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			bad := stopServerAndDamageCache(t, dbPath, tc.damage)
			port := startServerDiscardingCache(t, dbPath, bad)
			waitColors(t, ns, n, "cyan")
			after, err := cs.EffectivepolicyV1alpha1().EffectivePolicies("").List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if epochOf(after.ResourceVersion) == epochOf(before.ResourceVersion) {
				t.Fatalf("rebuilt cache kept the epoch of the discarded one (%s, %s)", before.ResourceVersion, after.ResourceVersion)
			}
			if len(after.Items) != len(before.Items) {
				t.Fatalf("%d EffectivePolicies after the rebuild, %d before", len(after.Items), len(before.Items))
			}

			// The rebuilt file is what the next start restores.
			localUp(t, "restart-server")
			if r := restoredObjects(t); r["effectivepolicies"] != len(after.Items) {
				t.Fatalf("restart after the rebuild restored %v, want %d effectivepolicies", r, len(after.Items))
			}
			if v, err := serverMetric(t, port, "effectivepolicy_cache_discarded_total"); err != nil || v != 0 {
				t.Fatalf("the rebuilt file was discarded again: %v %v", v, err)
			}
			waitColors(t, ns, n, "cyan")
		})
	}
}

// cacheDamage: damage returns the damaged copy of the cache file's bytes.
type cacheDamage struct {
	name   string
	damage func(t *testing.T, orig []byte) []byte
}

func cacheDamages() []cacheDamage {
	return []cacheDamage{
		{"truncated to half", func(_ *testing.T, orig []byte) []byte { return orig[:len(orig)/2] }},
		{"truncated to one page", func(_ *testing.T, orig []byte) []byte { return orig[:4096] }},
		{"random garbage of the same size", func(t *testing.T, orig []byte) []byte {
			b := make([]byte, len(orig))
			if _, err := rand.Read(b); err != nil {
				t.Fatal(err)
			}
			return b
		}},
		{"meta pages zeroed", func(_ *testing.T, orig []byte) []byte {
			b := bytes.Clone(orig)
			clear(b[:8192])
			return b
		}},
	}
}

// stopServerAndDamageCache stops the server and replaces its cache file with
// the damaged copy, which it returns.
func stopServerAndDamageCache(t *testing.T, dbPath string, damage func(t *testing.T, orig []byte) []byte) []byte {
	t.Helper()
	localUp(t, "stop-server")
	orig, err := os.ReadFile(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(orig) < 8192 {
		t.Fatalf("cache file has %d bytes, expected at least two pages", len(orig))
	}
	bad := damage(t, orig)
	if err := os.WriteFile(dbPath, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(dbPath + ".corrupt")
	return bad
}

// startServerDiscardingCache starts the server and checks that it moved the
// damaged file (bad) aside, said so in its log, restored nothing from it and
// counts the discard; it returns the server's port.
func startServerDiscardingCache(t *testing.T, dbPath string, bad []byte) string {
	t.Helper()
	localUp(t, "start-server")
	if !serverRunning(t) {
		t.Fatal("server not running after start")
	}
	moved, err := os.ReadFile(dbPath + ".corrupt")
	if err != nil {
		t.Fatalf("damaged file not moved aside: %v", err)
	}
	if !bytes.Equal(moved, bad) {
		t.Fatalf("effectivepolicy.db.corrupt (%d bytes) is not the damaged file (%d bytes)", len(moved), len(bad))
	}
	logText := serverLogSinceStart(t)
	if !strings.Contains(logText, "Discarded the output cache") {
		t.Fatalf("no 'Discarded the output cache' in the server log:\n%s", logText)
	}
	for _, line := range strings.Split(logText, "\n") {
		if strings.Contains(line, "Discarded the output cache") {
			t.Logf("server log: %s", line)
		}
	}
	if r := restoredObjects(t); r["effectivepolicies"] != 0 || r["clustereffectivepolicies"] != 0 {
		t.Fatalf("restored %v outputs from a damaged file", r)
	}
	port := serverPort(t, 0)
	for metric, want := range map[string]float64{"effectivepolicy_cache_discarded_total": 1, "effectivepolicy_cache_degraded": 0} {
		if v, err := serverMetric(t, port, metric); err != nil || v != want {
			t.Fatalf("%s = %v (%v), want %v", metric, v, err, want)
		}
	}
	return port
}

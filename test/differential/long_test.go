//go:build long

package differential

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// TestLongAgree (build tag long) is `make test-long`'s share: DIFF_SEEDS seeds (default
// 3000) from DIFF_FIRST (default 1000, past TestAgree's), stopping when
// DIFF_BUDGET (default 20m) has passed; every check must agree.
func TestLongAgree(t *testing.T) {
	first := envUint(t, "DIFF_FIRST", 1000)
	n := envUint(t, "DIFF_SEEDS", 3000)
	budget, err := time.ParseDuration(envString("DIFF_BUDGET", "20m"))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(budget)
	for _, o := range Oracles() {
		t.Run(o.Name(), func(t *testing.T) {
			judged := uint64(0)
			for s := first; s < first+n && time.Now().Before(deadline); s += 100 {
				judgeSeeds(t, o, seedRange(s, min(100, first+n-s)))
				judged += min(100, first+n-s)
			}
			t.Logf("%s: judged %d seeds from %d", o.Name(), judged, first)
		})
	}
}

func envString(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envUint(t *testing.T, name string, def uint64) uint64 {
	v, err := strconv.ParseUint(envString(name, strconv.FormatUint(def, 10)), 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

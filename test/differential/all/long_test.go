//go:build long

package all_test

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
)

// TestLongAgree (build tag long) is `make test-long`'s share: DIFF_SEEDS seeds (default
// 3000) from DIFF_FIRST (default 1000, past TestAgree's), starting no batch of 20 once its
// share of DIFF_BUDGET (default 10m, split among the implementations) has passed, so that CI's
// time stays bounded whatever the machine's speed (a batch overruns it by its own time, under a
// minute). Every check must agree or disagree in a class docs/differential.md explains
// (Classify); an unexplained disagreement fails.
func TestLongAgree(t *testing.T) {
	first := envUint(t, "DIFF_FIRST", 1000)
	n := envUint(t, "DIFF_SEEDS", 3000)
	budget, err := time.ParseDuration(envString("DIFF_BUDGET", "10m"))
	if err != nil {
		t.Fatal(err)
	}
	end := time.Now().Add(budget)
	oracles := differential.Oracles()
	for i, o := range oracles {
		// Each implementation gets an equal share of what is left.
		deadline := time.Now().Add(time.Until(end) / time.Duration(len(oracles)-i))
		t.Run(o.Name(), func(t *testing.T) {
			judged := judgeSeeds(t, o, differential.SeedRange(first, n), deadline)
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

// TestLongKnownCases (build tag long) judges the known cases of the
// implementations whose oracle runs only in make test-long (kgateway).
func TestLongKnownCases(t *testing.T) {
	judgeKnownCases(t, knownCaseDirs(t, true), 1)
}

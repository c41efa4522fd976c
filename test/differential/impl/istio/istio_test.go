//go:build istio

package istio

import (
	"os"
	"strconv"
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// TestIstioAgree judges ISTIO_SEEDS seeds (default 100) from ISTIO_FIRST (default 1) with Istio's
// own policy selection (istio.go): every check must agree, and every kind must be seen applied
// by Istio somewhere (an output read wrong would agree vacuously). Run by `make test-long`
// (-tags istio); the first run builds the oracle (docs/differential.md, "Istio").
func TestIstioAgree(t *testing.T) {
	first, n := istioEnvUint(t, "ISTIO_FIRST", 1), istioEnvUint(t, "ISTIO_SEEDS", 100)
	o := differential.OracleNamed("istio")
	var tally differential.Tally
	valued := map[string]int{}
	seeds := differential.SeedRange(first, n)
	for i := 0; i < len(seeds); i += 20 {
		rs, err := differential.RunBatch(o, seeds[i:min(i+20, len(seeds))])
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			tally.Add(r)
			for _, c := range r.Checks {
				if c.Theirs != "" {
					valued[c.Kind]++
				}
			}
			for _, c := range r.Disagreements() {
				t.Errorf("seed %d: %s", r.Seed, c)
			}
		}
	}
	for _, kind := range []string{gen.IstioAuthz, gen.IstioRequestAuthn, gen.IstioWasm, gen.IstioTrafficExtension, gen.IstioTelemetry, gen.IstioEnvoyFilter} {
		if valued[kind] == 0 {
			t.Errorf("Istio applied no %s in %d cases: the output is not read", kind, len(seeds))
		}
	}
	t.Logf("%d/%d cases agree, %d/%d checks (%d with a value)", tally.CasesAgreeing, tally.Cases,
		tally.ChecksAgreeing, tally.Checks, tally.ChecksSet)
}

func istioEnvUint(t *testing.T, name string, def uint64) uint64 {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

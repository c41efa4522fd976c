package all_test

import (
	"testing"
	"time"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
	_ "github.com/effectivepolicy-dev/effectivepolicy/test/differential/all"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// agreeSeeds are the seeds `make test` judges: two batches, under a minute
// on 2 cores once egctl is built. `make test-long` runs thousands more
// (TestLongAgree, cmd/difftest).
var agreeSeeds = differential.SeedRange(1, 40)

// TestAgree judges the fixed seeds with every implementation: every check
// must agree or disagree in a known class (Classify), and the checks must see values of every generated kind (a
// reading of the implementation's output that found nothing would agree
// vacuously).
func TestAgree(t *testing.T) {
	for _, o := range differential.Oracles() {
		if l, ok := o.(interface{ LongOnly() bool }); ok && l.LongOnly() {
			continue
		}
		t.Run(o.Name(), func(t *testing.T) {
			judgeSeeds(t, o, agreeSeeds, time.Time{})
		})
	}
}

// judgeSeeds judges seeds with o in batches of 20, starting no batch after
// deadline (zero: none), and returns how many it judged. A disagreement of
// a known class (Classify) is counted and logged; any other fails the test.
func judgeSeeds(t *testing.T, o differential.Oracle, seeds []uint64, deadline time.Time) int {
	t.Helper()
	var tally differential.Tally
	valued := map[string]int{}
	for i := 0; i < len(seeds) && (deadline.IsZero() || time.Now().Before(deadline)); i += 20 {
		batch := seeds[i:min(i+20, len(seeds))]
		rs, err := differential.RunBatch(o, batch)
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
			_, unexplained := r.Explained()
			for _, c := range unexplained {
				t.Errorf("seed %d: unexplained: %s", r.Seed, c)
			}
		}
	}
	kinds := []string{gen.BTP, gen.SP, gen.CTP, gen.EEP}
	if k, ok := o.(interface{ Kinds() []string }); ok {
		kinds = k.Kinds()
	}
	for _, kind := range kinds {
		if valued[kind] == 0 {
			t.Errorf("no check of %s saw a value in %d cases: the output is not read", kind, tally.Cases)
		}
	}
	t.Logf("%d cases: %s; %d/%d checks agree (%d with a value)", tally.Cases, differential.FormatClasses(tally),
		tally.ChecksAgreeing, tally.Checks, tally.ChecksSet)
	return tally.Cases
}

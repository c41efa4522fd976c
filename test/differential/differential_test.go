package differential

import (
	"bytes"
	"testing"
	"time"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// agreeSeeds are the seeds `make test` judges: two batches, under a minute
// on 2 cores once egctl is built. `make test-long` runs thousands more
// (TestLongAgree, cmd/difftest).
var agreeSeeds = seedRange(1, 40)

func seedRange(from, n uint64) []uint64 {
	var out []uint64
	for s := from; s < from+n; s++ {
		out = append(out, s)
	}
	return out
}

// TestAgree judges the fixed seeds with every implementation: every check
// must agree or disagree in a known class (known.go), and the checks must see values of every generated kind (a
// reading of the implementation's output that found nothing would agree
// vacuously).
func TestAgree(t *testing.T) {
	for _, o := range Oracles() {
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
func judgeSeeds(t *testing.T, o Oracle, seeds []uint64, deadline time.Time) int {
	t.Helper()
	var tally Tally
	valued := map[string]int{}
	for i := 0; i < len(seeds) && (deadline.IsZero() || time.Now().Before(deadline)); i += 20 {
		batch := seeds[i:min(i+20, len(seeds))]
		rs, err := RunBatch(o, batch)
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
	t.Logf("%d cases: %s; %d/%d checks agree (%d with a value)", tally.Cases, FormatClasses(tally),
		tally.ChecksAgreeing, tally.Checks, tally.ChecksSet)
	return tally.Cases
}

// TestGenerateDeterministic: a seed always gives the same objects, and
// different seeds different ones.
func TestGenerateDeterministic(t *testing.T) {
	for _, s := range []uint64{1, 2, 77, 1 << 40} {
		a, err := YAML(gen.Generate(s, gen.All).Objects())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := YAML(gen.Generate(s, gen.All).Objects())
		c, _ := YAML(gen.Generate(s+1, gen.All).Objects())
		if !bytes.Equal(a, b) {
			t.Errorf("seed %d: two runs differ", s)
		}
		if bytes.Equal(a, c) {
			t.Errorf("seeds %d and %d give the same objects", s, s+1)
		}
	}
}

// TestGenerateCoversStructures: over a few hundred seeds the generator
// writes every structure it promises.
func TestGenerateCoversStructures(t *testing.T) {
	kinds := map[string]int{}
	var sections, merges, unnamed, grants int
	for s := uint64(0); s < 300; s++ {
		y, _ := YAML(gen.Generate(s, gen.All).Objects())
		for _, o := range gen.Generate(s, gen.All).Objects() {
			kinds[o.GetKind()]++
		}
		sections += bytes.Count(y, []byte("sectionName:"))
		merges += bytes.Count(y, []byte("mergeType:"))
		unnamed += bytes.Count(y, []byte("- backendRefs:"))
		grants += bytes.Count(y, []byte("kind: ReferenceGrant"))
	}
	for _, k := range []string{"GatewayClass", "Gateway", "ListenerSet", "HTTPRoute", "GRPCRoute", "TCPRoute",
		"UDPRoute", "TLSRoute", "ReferenceGrant", gen.BTP, gen.SP, gen.CTP, gen.EEP} {
		if kinds[k] == 0 {
			t.Errorf("no %s in 300 seeds", k)
		}
	}
	if sections == 0 || merges == 0 || unnamed == 0 || grants == 0 {
		t.Errorf("sections %d, mergeTypes %d, rules %d, grants %d: want some of each", sections, merges, unnamed, grants)
	}
}

package all_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
)

// knownCaseDirs are the test/upstream cases with a known.json whose
// implementation's oracle runs in make test (long false) or only in
// make test-long (long true).
func knownCaseDirs(t *testing.T, long bool) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(differential.RepoRoot(), "test", "upstream", "*", "*", differential.KnownCaseFile))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		impl := filepath.Base(filepath.Dir(filepath.Dir(f)))
		o := differential.OracleNamed(impl)
		if o == nil {
			t.Errorf("%s: no oracle %q", f, impl)
			continue
		}
		l, ok := o.(interface{ LongOnly() bool })
		if (ok && l.LongOnly()) == long {
			out = append(out, filepath.Dir(f))
		}
	}
	return out
}

// judgeKnownCases runs each known case's implementation on the case's
// objects: the two sides must differ exactly where and as known.json says,
// each difference of known.json's class (differential.JudgeKnownCase). So
// a case fails when the implementation's bug is fixed, when we change, or
// when the class's predicate no longer recognizes it.
func judgeKnownCases(t *testing.T, dirs []string, atLeast int) {
	t.Helper()
	if len(dirs) < atLeast {
		t.Errorf("found %d known cases, want at least %d", len(dirs), atLeast)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(filepath.Dir(dir))+"/"+filepath.Base(dir), func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(dir, "expected.json")); err != nil {
				t.Errorf("a known case needs expected.json (our answer): %v", err)
			}
			problems, err := differential.JudgeKnownCase(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range problems {
				t.Error(p)
			}
		})
	}
}

// TestKnownCases judges the known cases of the implementations make test
// runs (Envoy Gateway, Kuadrant): one case per known class.
func TestKnownCases(t *testing.T) {
	judgeKnownCases(t, knownCaseDirs(t, false), 5)
}

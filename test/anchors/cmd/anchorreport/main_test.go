package main

import (
	"strings"
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/test/anchors"
)

func result(side string, routes int, wall, cpu float64, done float64) anchors.Result {
	return anchors.Result{
		Side: side, Topology: anchors.Topology{Routes: routes},
		WallSeconds: wall, CPUSeconds: cpu, PeakHeapMiB: 1,
		Finished: done == 1, Done: done,
	}
}

// withPhases gives r a topology phase and an effective-policy phase of
// the given wall seconds (CPU the same).
func withPhases(r anchors.Result, topology, effective float64) anchors.Result {
	r.Phases = []anchors.Phase{{Name: "topology", Wall: topology, CPU: topology}, {Name: "effective", Wall: effective, CPU: effective}}
	return r
}

// TestJudge: the verdict at 2,000 routes, from finished runs and from
// policy-machinery runs cut short (their ratios are lower bounds).
func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		name     string
		results  []anchors.Result
		met      bool
		measured bool
		text     string
	}{
		{"met", []anchors.Result{result(anchors.SideOurs, 2000, 1, 1, 1), result(anchors.SidePM, 2000, 150, 120, 1)},
			true, true, "150× wall, 120× CPU: met"},
		{"CPU ratio short", []anchors.Result{result(anchors.SideOurs, 2000, 1, 2, 1), result(anchors.SidePM, 2000, 150, 120, 1)},
			false, true, "not met"},
		{"cut short: lower bounds and an estimate", []anchors.Result{result(anchors.SideOurs, 2000, 1, 1, 1), result(anchors.SidePM, 2000, 600, 900, 0.25)},
			true, true, "at least 600× wall, at least 900× CPU: met (policy-machinery was stopped after 600 s with 25.0% of its queries done; extrapolated, it would take 2400 s, 2400× ours)"},
		{"cut short: only the last phase is extrapolated", []anchors.Result{result(anchors.SideOurs, 2000, 1, 1, 1), withPhases(result(anchors.SidePM, 2000, 600, 900, 0.25), 100, 500)},
			true, true, "extrapolated, it would take 2100 s, 2100× ours"},
		{"no run at the goal's size", []anchors.Result{result(anchors.SideOurs, 500, 1, 1, 1), result(anchors.SidePM, 500, 150, 120, 1)},
			false, false, "not judged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := pair(tc.results)
			if err != nil {
				t.Fatal(err)
			}
			v := judge(rows)
			if v.Met != tc.met || v.Measured != tc.measured || !strings.Contains(v.Text, tc.text) {
				t.Errorf("got met=%v measured=%v %q, want met=%v measured=%v and %q", v.Met, v.Measured, v.Text, tc.met, tc.measured, tc.text)
			}
		})
	}
}

func TestPairNeedsBothSides(t *testing.T) {
	if _, err := pair([]anchors.Result{result(anchors.SideOurs, 250, 1, 1, 1)}); err == nil {
		t.Error("a scale with one side paired")
	}
}

func TestRatioOfZero(t *testing.T) {
	if r := ratio(1, 0); r != 0 {
		t.Errorf("ratio over zero = %v, want 0 (unknown)", r)
	}
}

func TestThousands(t *testing.T) {
	for in, want := range map[int]string{250: "250", 2000: "2,000", 1234567: "1,234,567"} {
		if got := thousands(in); got != want {
			t.Errorf("thousands(%d) = %s, want %s", in, got, want)
		}
	}
}

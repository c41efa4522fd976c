package main

import (
	"math"
	"testing"
)

func TestFitPower(t *testing.T) {
	cases := []struct {
		name  string
		pairs [][2]float64 // scale, value
		k, c  float64
		ok    bool
	}{
		{"linear", [][2]float64{{0.25, 1}, {1, 4}, {5, 20}}, 1, 4, true},
		{"quadratic", [][2]float64{{0.5, 0.75}, {1, 3}, {2, 12}}, 2, 3, true},
		{"constant", [][2]float64{{1, 7}, {2, 7}}, 0, 7, true},
		{"one point", [][2]float64{{1, 7}}, 0, 0, false},
		{"zero values skipped", [][2]float64{{1, 0}, {2, 4}}, 0, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var runs []run
			for _, p := range tc.pairs {
				runs = append(runs, run{Scale: p[0], Metrics: map[string]float64{"wall-s": p[1]}})
			}
			f, ok := fitPower(runs, "wall-s")
			if ok != tc.ok {
				t.Fatalf("ok %v, want %v", ok, tc.ok)
			}
			if ok && (math.Abs(f.K-tc.k) > 1e-9 || math.Abs(f.C-tc.c) > 1e-9) {
				t.Errorf("k %v c %v, want %v %v", f.K, f.C, tc.k, tc.c)
			}
		})
	}
}

func TestParseLine(t *testing.T) {
	m, ok := parseLine("BenchmarkGrowth-2   	       1	 351189616 ns/op	         0.2287 cpu-s	        13.71 input-MB	      2018 keys")
	if !ok || m["cpu-s"] != 0.2287 || m["keys"] != 2018 || m["ns/op"] != 351189616 {
		t.Errorf("got %v %v", m, ok)
	}
	for _, bad := range []string{"BenchmarkFullComputation-2 1 2 ns/op", "--- BENCH: BenchmarkGrowth", "BenchmarkGrowth-2 1 x ns/op"} {
		if _, ok := parseLine(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestJudge(t *testing.T) {
	cases := []struct {
		name string
		runs []run
		met  bool
	}{
		{"met", []run{{Scale: 5, Metrics: map[string]float64{"wall-s": 20, "peak-heap-MB": 3000}}}, true},
		{"too slow", []run{{Scale: 5, Metrics: map[string]float64{"wall-s": 26, "peak-heap-MB": 3000}}}, false},
		{"too big", []run{{Scale: 5, Metrics: map[string]float64{"wall-s": 20, "peak-heap-MB": 5000}}}, false},
		{"not measured", []run{{Scale: 2, Metrics: map[string]float64{"wall-s": 1, "peak-heap-MB": 1}}}, false},
	}
	for _, tc := range cases {
		r := report{Runs: tc.runs}
		judge(&r)
		if r.Goal.Met != tc.met {
			t.Errorf("%s: met %v", tc.name, r.Goal.Met)
		}
	}
}

// Command growthreport turns BenchmarkGrowth runs of package scale, one per
// topology scale, into docs/benchmarks/growth.md and growth.json: time and
// memory of the start-up computation at each scale, and the exponent k of
// the least-squares fit value ≈ c·scale^k (hack/bench-growth.sh runs it).
//
//	growthreport -o docs/benchmarks/growth -machine "key=value" ... 0.25=run1.txt 0.5=run2.txt ...
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/benchkit"
)

// The goal at 5 times the scale-1 topology (100,000 routes, 25,000
// policies), on the 2-core machine.
const (
	goalScale   = 5
	goalSeconds = 25
	goalMiB     = 4 << 10
)

// run is BenchmarkGrowth at one scale.
type run struct {
	Scale   float64            `json:"scale"`
	Metrics map[string]float64 `json:"metrics"`
}

// fit is value ≈ C·scale^K over the runs.
type fit struct {
	Metric string  `json:"metric"`
	K      float64 `json:"exponent"`
	C      float64 `json:"atScale1"`
}

type report struct {
	Machine map[string]string `json:"machine"`
	order   []string
	Runs    []run `json:"runs"`
	Fits    []fit `json:"fits"`
	Goal    struct {
		Scale         float64 `json:"scale"`
		WallSeconds   float64 `json:"wallSeconds"`
		PeakHeapMiB   float64 `json:"peakHeapMiB"`
		PeakRSSMiB    float64 `json:"peakRSSMiB"`
		Met           bool    `json:"met"`
		MaxSeconds    float64 `json:"maxSeconds"`
		MaxMemoryMiB  float64 `json:"maxMemoryMiB"`
		ScaleMeasured bool    `json:"scaleMeasured"`
	} `json:"goal"`
}

// metrics are those the report fits and shows, in order, with their titles.
var metrics = []struct{ name, title string }{
	{"wall-s", "wall time (s)"},
	{"cpu-s", "CPU time (s)"},
	{"peak-heap-MB", "peak heap (MiB)"},
	{"peak-live-heap-MB", "peak live heap (MiB)"},
	{"kept-heap-MB", "kept heap (MiB)"},
	{"peak-RSS-MB", "peak RSS (MiB)"},
}

func main() {
	var machine benchkit.KV
	out := flag.String("o", "growth", "output path without extension (.md and .json are written)")
	flag.Var(&machine, "machine", "key=value describing the machine or run (repeatable, kept in order)")
	flag.Parse()
	r := report{Machine: map[string]string{}}
	for i, k := range machine.Keys {
		r.Machine[k] = machine.Vals[i]
		r.order = append(r.order, k)
	}
	for _, arg := range flag.Args() {
		s, path, ok := strings.Cut(arg, "=")
		scale, err := strconv.ParseFloat(s, 64)
		if !ok || err != nil || scale <= 0 {
			fail(fmt.Errorf("want SCALE=FILE, got %q", arg))
		}
		m, err := parseFile(path)
		if err != nil {
			fail(err)
		}
		r.Runs = append(r.Runs, run{Scale: scale, Metrics: m})
	}
	if len(r.Runs) < 2 {
		fail(fmt.Errorf("need runs at two scales at least, got %d", len(r.Runs)))
	}
	sort.Slice(r.Runs, func(i, j int) bool { return r.Runs[i].Scale < r.Runs[j].Scale })
	for _, m := range metrics {
		if f, ok := fitPower(r.Runs, m.name); ok {
			r.Fits = append(r.Fits, f)
		}
	}
	judge(&r)
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		fail(err)
	}
	if err := os.WriteFile(*out+".json", append(raw, '\n'), 0o644); err != nil {
		fail(err)
	}
	if err := os.WriteFile(*out+".md", []byte(markdown(r)), 0o644); err != nil {
		fail(err)
	}
}

// parseFile reads the metrics of the BenchmarkGrowth line of a `go test
// -bench` output.
func parseFile(path string) (map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if m, ok := parseLine(sc.Text()); ok {
			return m, nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%s: no BenchmarkGrowth result", path)
}

// parseLine parses "BenchmarkGrowth-2 1 123 ns/op 4.5 wall-s ...".
func parseLine(line string) (map[string]float64, bool) {
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[0], "BenchmarkGrowth") {
		return nil, false
	}
	m := map[string]float64{}
	for i := 2; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return nil, false
		}
		m[f[i+1]] = v
	}
	return m, true
}

// fitPower fits log(value) = log(C) + K·log(scale) by least squares over
// the runs that report the metric with a positive value.
func fitPower(runs []run, metric string) (fit, bool) {
	var xs, ys []float64
	for _, r := range runs {
		if v, ok := r.Metrics[metric]; ok && v > 0 {
			xs, ys = append(xs, math.Log(r.Scale)), append(ys, math.Log(v))
		}
	}
	n := float64(len(xs))
	if n < 2 {
		return fit{}, false
	}
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return fit{}, false
	}
	k := (n*sxy - sx*sy) / den
	return fit{Metric: metric, K: k, C: math.Exp((sy - k*sx) / n)}, true
}

// judge checks the goal at goalScale: measured when a run is there,
// otherwise not met (an extrapolation is no measurement).
func judge(r *report) {
	g := &r.Goal
	g.Scale, g.MaxSeconds, g.MaxMemoryMiB = goalScale, goalSeconds, goalMiB
	for _, run := range r.Runs {
		if run.Scale == goalScale {
			g.ScaleMeasured = true
			g.WallSeconds = run.Metrics["wall-s"]
			g.PeakHeapMiB = run.Metrics["peak-heap-MB"]
			g.PeakRSSMiB = run.Metrics["peak-RSS-MB"]
		}
	}
	g.Met = g.ScaleMeasured && g.WallSeconds <= goalSeconds && g.PeakHeapMiB <= goalMiB
}

func markdown(r report) string {
	var b strings.Builder
	p := func(format string, args ...interface{}) { fmt.Fprintf(&b, format+"\n", args...) }
	p("# Growth of the start-up computation")
	p("")
	p("Generated by `hack/bench-growth.sh` (`BenchmarkGrowth` in `test/scale`, one process per scale; `test/scale/growthreport`); do not edit by hand.")
	p("")
	p("One op: a fresh engine fed every object of the generated topology in bulk mode, every key computed on GOMAXPROCS goroutines sharing the memo, each output encoded as the server stores it, the memo dropped. The garbage collector's target is 50 %%, as the server sets it for its start-up. Heap: Go heap objects (garbage not yet swept included), sampled every 2 ms; live heap: what the last garbage collection found live; both minus the generator's input objects, which a server never holds (its informers keep key stubs). Peak RSS is the test process's and includes those inputs.")
	p("")
	p("| scale | objects | outputs | wall time | CPU time | peak heap | peak live heap | kept heap | inputs (harness) | peak RSS |")
	p("|---|---|---|---|---|---|---|---|---|---|")
	for _, run := range r.Runs {
		m := run.Metrics
		p("| %g | %.0f | %.0f | %.2f s | %.2f s | %.0f MiB | %.0f MiB | %.0f MiB | %.0f MiB | %.0f MiB |",
			run.Scale, m["objects"], m["keys"], m["wall-s"], m["cpu-s"], m["peak-heap-MB"], m["peak-live-heap-MB"], m["kept-heap-MB"], m["input-MB"], m["peak-RSS-MB"])
	}
	p("")
	p("Fitted growth, value ≈ c·scale^k (least squares on logarithms):")
	p("")
	p("| metric | k | c (at scale 1) |")
	p("|---|---|---|")
	titles := map[string]string{}
	for _, m := range metrics {
		titles[m.name] = m.title
	}
	for _, f := range r.Fits {
		p("| %s | %.2f | %.3g |", titles[f.Metric], f.K, f.C)
	}
	p("")
	g := r.Goal
	verdict := "**met**"
	if !g.Met {
		verdict = "**missed**"
	}
	if !g.ScaleMeasured {
		p("Goal at scale %g (≤ %.0f s, ≤ %.0f GiB): not measured in this run, so %s.", g.Scale, g.MaxSeconds, g.MaxMemoryMiB/1024, verdict)
	} else {
		p("Goal at scale %g: ≤ %.0f s and ≤ %.0f GiB. Measured: %.1f s, peak heap %.2f GiB (peak RSS with the harness's inputs %.2f GiB): %s.",
			g.Scale, g.MaxSeconds, g.MaxMemoryMiB/1024, g.WallSeconds, g.PeakHeapMiB/1024, g.PeakRSSMiB/1024, verdict)
	}
	p("")
	p("## Machine")
	p("")
	for _, k := range r.order {
		p("- %s: %s", k, r.Machine[k])
	}
	return b.String()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "growthreport:", err)
	os.Exit(1)
}

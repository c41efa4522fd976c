// Command anchorreport turns anchorbench results (one JSON file per side
// and scale) into docs/benchmarks/anchors.md and anchors.json: time and
// memory of this project's engine and of policy-machinery at each scale,
// their ratios, and the verdict on issue #20's goal (policy-machinery at
// least 100 times slower at 2,000 routes). hack/bench-anchors.sh runs it.
//
//	anchorreport -o docs/benchmarks/anchors -machine "key=value" ... ours-0.1.json pm-0.1.json ...
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"

	"github.com/effectivepolicy-dev/effectivepolicy/test/anchors"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/benchkit"
)

// The goal: policy-machinery ÷ ours ≥ 100 at 2,000 routes.
const (
	goalRoutes = 2000
	goalRatio  = 100
)

// row is one scale: both sides and their ratios.
type row struct {
	Routes int            `json:"httpRoutes"`
	Ours   anchors.Result `json:"ours"`
	PM     anchors.Result `json:"policyMachinery"`
	// Ratios policy-machinery ÷ ours. When policy-machinery did not finish
	// they are lower bounds (AtLeast), and Estimated* extrapolate its time
	// from the fraction it did.
	WallRatio          float64 `json:"wallRatio"`
	CPURatio           float64 `json:"cpuRatio"`
	PeakHeapRatio      float64 `json:"peakHeapRatio"`
	AtLeast            bool    `json:"atLeast"`
	EstimatedPMWall    float64 `json:"estimatedPMWallSeconds,omitempty"`
	EstimatedWallRatio float64 `json:"estimatedWallRatio,omitempty"`
	EstimatedPMCPU     float64 `json:"estimatedPMCPUSeconds,omitempty"`
	EstimatedCPURatio  float64 `json:"estimatedCPURatio,omitempty"`
}

type verdict struct {
	Routes   int     `json:"httpRoutes"`
	Ratio    float64 `json:"goalRatio"`
	Measured bool    `json:"measured"` // a row at goalRoutes exists
	Met      bool    `json:"met"`
	Text     string  `json:"text"`
}

type report struct {
	Machine map[string]string `json:"machine"`
	order   []string
	Rows    []row   `json:"scales"`
	Goal    verdict `json:"goal"`
}

func main() {
	var machine benchkit.KV
	out := flag.String("o", "anchors", "output path without extension (.md and .json are written)")
	flag.Var(&machine, "machine", "key=value describing the machine or run (repeatable, kept in order)")
	flag.Parse()
	r := report{Machine: map[string]string{}}
	for i, k := range machine.Keys {
		r.Machine[k] = machine.Vals[i]
		r.order = append(r.order, k)
	}
	results, err := readResults(flag.Args())
	if err != nil {
		fail(err)
	}
	r.Rows, err = pair(results)
	if err != nil {
		fail(err)
	}
	r.Goal = judge(r.Rows)
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		fail(err)
	}
	if err := os.WriteFile(*out+".json", append(js, '\n'), 0o644); err != nil {
		fail(err)
	}
	if err := os.WriteFile(*out+".md", []byte(markdown(r)), 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "anchorreport:", err)
	os.Exit(1)
}

func readResults(paths []string) ([]anchors.Result, error) {
	var out []anchors.Result
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var r anchors.Result
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// pair matches each scale's two sides and computes the ratios.
func pair(results []anchors.Result) ([]row, error) {
	byRoutes := map[int]*row{}
	for _, r := range results {
		rw := byRoutes[r.Topology.Routes]
		if rw == nil {
			rw = &row{Routes: r.Topology.Routes}
			byRoutes[r.Topology.Routes] = rw
		}
		switch r.Side {
		case anchors.SideOurs:
			rw.Ours = r
		case anchors.SidePM:
			rw.PM = r
		default:
			return nil, fmt.Errorf("unknown side %q", r.Side)
		}
	}
	var rows []row
	for _, rw := range byRoutes {
		if rw.Ours.Side == "" || rw.PM.Side == "" {
			return nil, fmt.Errorf("%d routes: both sides are needed", rw.Routes)
		}
		if !rw.Ours.Finished {
			return nil, fmt.Errorf("%d routes: ours did not finish: %s", rw.Routes, rw.Ours.Error)
		}
		rw.WallRatio = ratio(rw.PM.WallSeconds, rw.Ours.WallSeconds)
		rw.CPURatio = ratio(rw.PM.CPUSeconds, rw.Ours.CPUSeconds)
		rw.PeakHeapRatio = ratio(rw.PM.PeakHeapMiB, rw.Ours.PeakHeapMiB)
		if !rw.PM.Finished {
			rw.AtLeast = true
			if rw.PM.Done > 0 {
				rw.EstimatedPMWall, rw.EstimatedPMCPU = extrapolate(rw.PM)
				rw.EstimatedWallRatio = ratio(rw.EstimatedPMWall, rw.Ours.WallSeconds)
				rw.EstimatedCPURatio = ratio(rw.EstimatedPMCPU, rw.Ours.CPUSeconds)
			}
		}
		rows = append(rows, *rw)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Routes < rows[j].Routes })
	return rows, nil
}

// extrapolate estimates the time of a policy-machinery run cut short: the
// topology took what it took, the effective policies (the last phase) the
// time measured divided by the fraction of queries done (the rules are
// taken in map order, so the queries done are a random sample).
func extrapolate(r anchors.Result) (wall, cpu float64) {
	n := len(r.Phases)
	if n == 0 {
		return r.WallSeconds / r.Done, r.CPUSeconds / r.Done
	}
	last := r.Phases[n-1]
	return r.WallSeconds + last.Wall/r.Done - last.Wall, r.CPUSeconds + last.CPU/r.Done - last.CPU
}

// ratio is a/b, or 0 (unknown) when b is not positive: JSON has no
// infinity.
func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

// judge: the goal is met when both time ratios at goalRoutes are at least
// goalRatio (lower bounds count: a run cut short only makes them larger).
func judge(rows []row) verdict {
	v := verdict{Routes: goalRoutes, Ratio: goalRatio}
	for _, rw := range rows {
		if rw.Routes != goalRoutes {
			continue
		}
		v.Measured = true
		v.Met = rw.WallRatio >= goalRatio && rw.CPURatio >= goalRatio
		bound := ""
		if rw.AtLeast {
			bound = "at least "
		}
		v.Text = fmt.Sprintf("policy-machinery ÷ ours at %s routes: %s%.0f× wall, %s%.0f× CPU: %s",
			thousands(rw.Routes), bound, rw.WallRatio, bound, rw.CPURatio, map[bool]string{true: "met", false: "not met"}[v.Met])
		if rw.AtLeast {
			v.Text += fmt.Sprintf(" (policy-machinery was stopped after %.0f s with %.1f%% of its queries done;"+
				" extrapolated, it would take %.0f s, %.0f× ours)", rw.PM.WallSeconds, 100*rw.PM.Done, rw.EstimatedPMWall, rw.EstimatedWallRatio)
		}
	}
	if !v.Measured {
		v.Text = fmt.Sprintf("no run at %s routes: not judged", thousands(goalRoutes))
	}
	return v
}

package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"time"
)

// report is one run's numbers: the plugin's, and the baseline's when one
// was measured in the same run.
type report struct {
	measures
	Base                  *measures
	BaseName              string
	Mode                  string
	Runs                  int
	LoadBefore, LoadAfter string
	Focus, Route, Targets string
	Nodes, Edges          int
	KubectlGet            []time.Duration
}

// measures are one plugin's numbers.
type measures struct {
	ServerReady, GraphGET   time.Duration
	Interactive, Click      []time.Duration
	GraphFetched, TargetGET []time.Duration
	// LoadCPU and ClickCPU are Chromium's CPU time (every process of it)
	// over the same spans, to 10 ms (the kernel's ticks).
	LoadCPU, ClickCPU []time.Duration
	// Phases are the page's own marks: each the time since the one before.
	Phases map[string][]time.Duration
}

// phaseNames are the page's marks in their order, and what each measures.
var phaseNames = []string{"ep:graph-read", "ep:folded", "ep:laid-out", "ep:drawn"}

var phaseWords = map[string]string{
	"ep:graph-read": "navigation to the graph read (script loaded, JSON fetched and parsed)",
	"ep:folded":     "the graph folded into what is drawn (web/src/fold.js)",
	"ep:laid-out":   "cytoscape: styles and the layout",
	"ep:drawn":      "the first frame drawn (two animation frames after ready)",
}

func (r *report) write(path string) error {
	var w io.Writer = os.Stdout
	if path != "-" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	p("# The page of `kubectl effectivepolicy ui` at scale 1 (%s)", r.Mode)
	p("")
	p("Written by `hack/bench-ui.sh` (`test/uibench`) on %s; %d CPUs; load average (1/5/15 min) %s before, %s after. Times are the median (minimum–maximum) of %d runs.",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), r.LoadBefore, r.LoadAfter, r.Runs)
	p("")
	p("The page: `ui -A`, focused on %s (the Gateway with the most routes): %d objects and %d edges drawn; %s.", r.Focus, r.Nodes, r.Edges, r.Targets)
	p("The route clicked: %s (the route drawn with the most policies).", r.Route)
	p("")
	r.table(p)
	if len(r.KubectlGet) > 0 {
		p("")
		p("Beside it: `kubectl get effectivepolicy %s -o yaml`: %s.", r.Route, stats(r.KubectlGet))
	} else {
		p("")
		p("The baseline `kubectl get effectivepolicy -o yaml` is not in an offline run (it needs the topology loaded in a cluster: `-kubeconfig`).")
	}
	return nil
}

// table writes the measures, the baseline's beside them when measured.
func (r *report) table(p func(string, ...any)) {
	row := func(what string, f func(m *measures) string) {
		if r.Base == nil {
			p("| %s | %s |", what, f(&r.measures))
			return
		}
		p("| %s | %s | %s |", what, f(&r.measures), f(r.Base))
	}
	if r.Base == nil {
		p("| measured | time |")
		p("|---|---|")
	} else {
		p("| measured | this build | %s |", r.BaseName)
		p("|---|---|---|")
	}
	one := func(d time.Duration) []time.Duration { return []time.Duration{d} }
	row("the server ready (process start to URL printed)", func(m *measures) string { return fmt.Sprintf("%.1f s", m.ServerReady.Seconds()) })
	row("`GET /api/graph` (the focused graph, from Go, once)", func(m *measures) string { return stats(one(m.GraphGET)) })
	row("navigation to the graph's JSON received (in the page)", func(m *measures) string { return stats(m.GraphFetched) })
	row("**navigation to interactive**: the first frame after the graph is laid out (goal ≤ 2 s)", func(m *measures) string { return "**" + stats(m.Interactive) + "**" })
	row("**click on the route to its stack painted** (goal ≤ 200 ms)", func(m *measures) string { return "**" + stats(m.Click) + "**" })
	row("**Chromium's CPU time from navigation to interactive** (every process: the wall time less the waits for a core)", func(m *measures) string { return "**" + stats(m.LoadCPU) + "**" })
	row("Chromium's CPU time from the click to the stack painted (10 ms ticks)", func(m *measures) string { return stats(m.ClickCPU) })
	row("`GET /api/target` of the route (from Go: the server's part of the click)", func(m *measures) string { return stats(m.TargetGET) })
	for _, name := range phaseNames {
		if len(r.Phases[name]) == 0 {
			continue
		}
		row("phase: "+phaseWords[name]+" (wall)", func(m *measures) string { return stats(m.Phases[name]) })
	}
}

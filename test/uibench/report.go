package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"time"
)

// report is one run's numbers.
type report struct {
	Mode                    string
	Runs                    int
	LoadBefore, LoadAfter   string
	ServerReady, GraphGET   time.Duration
	Focus, Route, Targets   string
	Nodes, Edges            int
	Interactive, Click      []time.Duration
	GraphFetched, TargetGET []time.Duration
	KubectlGet              []time.Duration
	// LoadCPU and ClickCPU are Chromium's CPU time (every process of it)
	// over the same spans, to 10 ms (the kernel's ticks).
	LoadCPU, ClickCPU []time.Duration
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
	p("| measured | time |")
	p("|---|---|")
	p("| the server ready (process start to URL printed) | %.1f s |", r.ServerReady.Seconds())
	p("| `GET /api/graph` (the focused graph, from Go, once) | %s |", stats([]time.Duration{r.GraphGET}))
	p("| navigation to the graph's JSON received (in the page) | %s |", stats(r.GraphFetched))
	p("| **navigation to interactive**: the first frame after the graph is laid out (goal ≤ 2 s) | **%s** |", stats(r.Interactive))
	p("| **click on the route to its stack painted** (goal ≤ 200 ms) | **%s** |", stats(r.Click))
	p("| Chromium's CPU time from navigation to interactive (every process: the wall time less the waits for a core) | %s |", stats(r.LoadCPU))
	p("| Chromium's CPU time from the click to the stack painted (10 ms ticks) | %s |", stats(r.ClickCPU))
	p("| `GET /api/target` of the route (from Go: the server's part of the click) | %s |", stats(r.TargetGET))
	if len(r.KubectlGet) > 0 {
		p("| baseline: `kubectl get effectivepolicy %s -o yaml` | %s |", r.Route, stats(r.KubectlGet))
	} else {
		p("| baseline: `kubectl get effectivepolicy -o yaml` | not in an offline run (needs the topology loaded in a cluster: `-kubeconfig`) |")
	}
	return nil
}

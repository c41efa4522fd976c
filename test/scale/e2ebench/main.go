// Command e2ebench is the end-to-end half of `make bench` (docs/benchmarks): it
// loads the topology of package scale into a real control plane and measures
// the server through kube-apiserver's aggregator. hack/bench-e2e.sh runs it:
//
//	e2ebench load    -kubeconfig K -scale S -o load.json      # before the server starts
//	e2ebench ready   -local .local -o ready.json              # while the server starts
//	e2ebench measure -kubeconfig K -local .local -load load.json -ready ready.json -o docs/benchmarks/e2e
//	e2ebench restart -kubeconfig K -local .local -report docs/benchmarks/e2e  # after measure
//	e2ebench render  -o docs/benchmarks/e2e                   # <o>.md again from <o>.json
//
// `measure` writes <o>.json and <o>.md. Every number comes from this run;
// nothing is estimated.
//
// This package holds the commands and the order of the steps; the packages
// below it do the work: load creates the topology, measure, edits and trace
// time the server, procfs and localup read the processes and the local
// control plane's state, and report holds the report and writes it.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/report"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: e2ebench load|ready|measure|restart|render [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "load":
		err = runLoad(os.Args[2:])
	case "ready":
		err = runReady(os.Args[2:])
	case "measure":
		err = runMeasure(os.Args[2:])
	case "restart":
		err = runRestart(os.Args[2:])
	case "render":
		err = runRender(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (load, ready, measure, restart, render)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2ebench:", err)
		os.Exit(1)
	}
}

// restConfig: high QPS and burst, so that client-side throttling never
// shapes what is measured.
func restConfig(kubeconfig string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS = 5000
	cfg.Burst = 10000
	cfg.Timeout = 10 * time.Minute
	return cfg, nil
}

func newFlagSet(name string) *flag.FlagSet { return flag.NewFlagSet(name, flag.ExitOnError) }

// runRender writes <o>.md from <o>.json (after a change of the markdown
// layout, without measuring again).
func runRender(args []string) error {
	fs := newFlagSet("render")
	out := fs.String("o", "docs/benchmarks/e2e", "report path without extension (<o>.json's verdicts are recomputed)")
	_ = fs.Parse(args)
	var r report.Report
	if err := report.ReadJSON(*out+".json", &r); err != nil {
		return err
	}
	return report.Write(*out, r)
}

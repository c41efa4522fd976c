package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"k8s.io/client-go/dynamic"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/load"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/report"
)

// runLoad is `e2ebench load`: the topology created before the server starts,
// and how long that took written as JSON for `e2ebench measure`.
func runLoad(args []string) error {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the control plane")
	sc := fs.Float64("scale", 1, "topology scale (1 = the large benchmark size (scale 1))")
	seed := fs.Uint64("seed", 1, "generator seed")
	workers := fs.Int("workers", 48, "concurrent create requests")
	out := fs.String("o", "", "write the result as JSON here")
	_ = fs.Parse(args)

	cfg, err := restConfig(*kubeconfig)
	if err != nil {
		return err
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	res, err := load.Topology(context.Background(), dc, *sc, *seed, *workers)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "e2ebench load: %d objects in %.1f s (%.0f/s; CRDs established after %.1f s; %d retries)\n",
		res.Objects, res.TotalSeconds, res.ObjectsPerS, res.CRDSeconds, res.Retries)
	return report.WriteJSON(*out, res)
}

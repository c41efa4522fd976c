// Command anchorbench runs one side of the policy-machinery anchor at one
// scale and prints its anchors.Result as JSON: hack/bench-anchors.sh runs
// each side at each scale in a process of its own, so that one run's
// garbage and peak RSS are not another's.
//
//	anchorbench -side ours -scale 0.1
//	anchorbench -side policy-machinery -scale 0.1 -timeout 10m
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/effectivepolicy-dev/effectivepolicy/test/anchors"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "anchorbench:", err)
		os.Exit(1)
	}
}

func run() error {
	side := flag.String("side", anchors.SideOurs, "ours or policy-machinery")
	sc := flag.Float64("scale", 0.0125, "topology size relative to test/scale's large size (20,000 HTTPRoutes)")
	seed := flag.Uint64("seed", 1, "generator seed")
	timeout := flag.Duration("timeout", 10*time.Minute, "policy-machinery: stop the effective-policy computation after this long")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if *side != anchors.SideOurs && *side != anchors.SidePM {
		return fmt.Errorf("unknown -side %q", *side)
	}
	if *cpuProfile != "" {
		stop, err := profile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	o := scale.Options{Scale: *sc, Seed: *seed}
	var r anchors.Result
	if *side == anchors.SideOurs {
		r = anchors.RunOurs(o)
	} else {
		r = anchors.RunPM(o, *timeout)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func profile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}

// Command difftest judges this project's answers with the implementations'
// own code on N random topologies from a given seed, and prints the
// agreement rate per implementation and per policy kind, and the cases by
// class: agree, known: <class> (every disagreement of a kind
// docs/differential.md explains, differential.Classify), unexplained:
//
//	go run ./cmd/difftest -seed 1 -n 1000
//	go run ./cmd/difftest -seed 42 -dump              # the objects of one seed
//	go run ./cmd/difftest -seed 1 -n 500 -write       # shrink and write disagreements as cases
//	go run ./cmd/difftest -impl kuadrant -seed 32 -known '<class>' -out /tmp/cases   # a known class's case
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
	// Every implementation's oracle (Istio's with -tags istio).
	_ "github.com/effectivepolicy-dev/effectivepolicy/test/differential/all"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// batch is how many seeds share one run of each side.
const batch = 20

func main() {
	seed := flag.Uint64("seed", 1, "first seed")
	n := flag.Int("n", 100, "how many seeds")
	impl := flag.String("impl", "", "one implementation (default: every registered one)")
	dump := flag.Bool("dump", false, "print the objects of -seed as YAML and exit")
	write := flag.Bool("write", false, "shrink each disagreement and write it as a case under test/upstream/<impl>/diff-<seed>-<n>")
	known := flag.String("known", "", "with -impl: shrink -seed's disagreement of this known class toward it and write it, with a known.json, under -out/<impl>")
	out := flag.String("out", "", "where -known writes (default: this repository's test/upstream)")
	limit := flag.Duration("timeout", 0, "stop starting new seeds after this long (0: none)")
	verbose := flag.Bool("v", false, "print every disagreement, and the count after every batch")
	flag.IntVar(&differential.ShrinkBudget, "shrink-budget", differential.ShrinkBudget, "judgements one shrink may make")
	flag.Parse()
	if *known != "" {
		o := differential.OracleNamed(*impl)
		if o == nil {
			fmt.Fprintf(os.Stderr, "difftest: -known needs -impl, one of the implementations (got %q)\n", *impl)
			os.Exit(2)
		}
		if err := writeKnown(o, *seed, *known, *out); err != nil {
			fmt.Fprintln(os.Stderr, "difftest:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*seed, *n, *impl, *dump, *write, *limit, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "difftest:", err)
		os.Exit(1)
	}
}

func run(seed uint64, n int, impl string, dump, write bool, limit time.Duration, verbose bool) error {
	oracles := differential.Oracles()
	if impl != "" {
		o := differential.OracleNamed(impl)
		if o == nil {
			return fmt.Errorf("no implementation %q", impl)
		}
		oracles = []differential.Oracle{o}
	}
	if dump {
		f := gen.All
		if impl != "" {
			f = oracles[0].Features()
		}
		b, err := differential.YAML(gen.Generate(seed, f).Objects())
		if err != nil {
			return err
		}
		_, err = os.Stdout.Write(b)
		return err
	}
	start := time.Now()
	for _, o := range oracles {
		var t differential.Tally
		for s := seed; s < seed+uint64(n); s += batch {
			if limit > 0 && time.Since(start) > limit {
				break
			}
			var seeds []uint64
			for i := s; i < s+batch && i < seed+uint64(n); i++ {
				seeds = append(seeds, i)
			}
			rs, err := differential.RunBatch(o, seeds)
			if err != nil {
				return err
			}
			for _, r := range rs {
				t.Add(r)
				if err := report(o, r, write, verbose); err != nil {
					return err
				}
			}
			if verbose {
				fmt.Printf("%s: %d seeds judged: %s (%s)\n", o.Name(), t.Cases, differential.FormatClasses(t),
					time.Since(start).Round(time.Second))
			}
		}
		printTally(o.Name(), t)
	}
	return nil
}

// report prints each disagreement with its class, and writes the case of
// the first unexplained one (a known class has its explanation already).
func report(o differential.Oracle, r differential.Outcome, write, verbose bool) error {
	objs := r.Case.Objects()
	var unexplained []differential.Check
	for _, c := range r.Disagreements() {
		class, ok := differential.Classify(o.Name(), c, objs)
		if !ok {
			unexplained = append(unexplained, c)
			class = "unexplained"
		} else {
			class = "known " + class
		}
		if verbose {
			fmt.Printf("seed %d: %s: %s\n", r.Seed, class, c)
		}
	}
	if !write || len(unexplained) == 0 {
		return nil
	}
	dir, err := differential.WriteCase(o, r, unexplained[0])
	if err != nil {
		return err
	}
	fmt.Printf("seed %d: wrote %s\n", r.Seed, dir)
	return nil
}

func printTally(name string, t differential.Tally) {
	fmt.Printf("%s: %d/%d cases agree (%.2f%%), %d/%d checks (%d with a value)\n", name, t.CasesAgreeing, t.Cases,
		pct(t.CasesAgreeing, t.Cases), t.ChecksAgreeing, t.Checks, t.ChecksSet)
	fmt.Printf("%s: cases: %s\n", name, differential.FormatClasses(t))
	for _, kind := range differential.SortedKinds(t) {
		k := t.PerKind[kind]
		fmt.Printf("  %-22s %d/%d cases (%.2f%%), %d/%d checks\n", kind, k.CasesAgreeing, k.Cases,
			pct(k.CasesAgreeing, k.Cases), k.ChecksAgreeing, k.Checks)
	}
}

func pct(a, b int) float64 {
	if b == 0 {
		return 100
	}
	return 100 * float64(a) / float64(b)
}

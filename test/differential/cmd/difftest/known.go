package main

import (
	"fmt"
	"path/filepath"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
)

// writeKnown shrinks a disagreement of the known class on seed toward that
// class and writes it, with its known.json, under root/<impl> (a known
// class's regression case, differential.WriteKnownCase).
func writeKnown(o differential.Oracle, seed uint64, class, root string) error {
	if root == "" {
		root = filepath.Join(differential.RepoRoot(), "test", "upstream")
	}
	rs, err := differential.RunBatch(o, []uint64{seed})
	if err != nil {
		return err
	}
	r := rs[0]
	for _, c := range r.Disagreements() {
		if got, _ := differential.Classify(o.Name(), c, r.Case.Objects()); got != class {
			continue
		}
		dir, err := differential.WriteKnownCase(o, r, c, class, root)
		if err != nil {
			return err
		}
		fmt.Printf("seed %d: wrote %s\n", seed, dir)
		return nil
	}
	return fmt.Errorf("seed %d: no disagreement of class %q with %s", seed, class, o.Name())
}

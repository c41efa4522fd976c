package differential

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// ProgramTimeout bounds one run of an implementation's program.
var ProgramTimeout = 10 * time.Minute

// Judge runs both sides on objs and returns the checks.
func Judge(o Oracle, objs []*unstructured.Unstructured) ([]Check, error) {
	argv, err := o.Command()
	if err != nil {
		return nil, err
	}
	in, err := o.Input(objs)
	if err != nil {
		return nil, err
	}
	data, err := YAML(in)
	if err != nil {
		return nil, err
	}
	out, err := runProgram(argv, data, ProgramTimeout)
	if err != nil {
		return nil, err
	}
	oursIn, err := o.Ours(objs)
	if err != nil {
		return nil, err
	}
	ours, err := ComputeOurs(oursIn)
	if err != nil {
		return nil, err
	}
	return o.Compare(objs, ours, out)
}

// Outcome is one seed's result.
type Outcome struct {
	Impl   string // the oracle's name
	Seed   uint64
	Case   *gen.Case
	Checks []Check
}

// Disagreements are the checks the two sides answer differently.
func (r Outcome) Disagreements() []Check {
	var out []Check
	for _, c := range r.Checks {
		if !c.Agree() {
			out = append(out, c)
		}
	}
	return out
}

// RunSeed generates seed's case for o and judges it.
func RunSeed(o Oracle, seed uint64) (Outcome, error) {
	c := gen.Generate(seed, o.Features())
	checks, err := Judge(o, c.Objects())
	if err != nil {
		return Outcome{}, fmt.Errorf("seed %d: %w", seed, err)
	}
	return Outcome{Impl: o.Name(), Seed: seed, Case: c, Checks: checks}, nil
}

// Tally counts cases and checks, in all and per policy kind: a case agrees
// for a kind when every check of that kind agrees.
type Tally struct {
	Cases, CasesAgreeing   int
	Checks, ChecksAgreeing int
	ChecksSet              int // checks where either side has a value
	PerKind                map[string]*KindTally
	// Classes counts cases by CaseClass: "agree", "known: <class>",
	// "unexplained".
	Classes map[string]int
}

// KindTally is Tally for one policy kind.
type KindTally struct {
	Cases, CasesAgreeing   int
	Checks, ChecksAgreeing int
}

// Add counts one outcome.
func (t *Tally) Add(r Outcome) {
	if t.PerKind == nil {
		t.PerKind = map[string]*KindTally{}
		t.Classes = map[string]int{}
	}
	t.Cases++
	t.Classes[CaseClass(r)]++
	agreeKind := map[string]bool{}
	all := true
	for _, c := range r.Checks {
		k := t.PerKind[c.Kind]
		if k == nil {
			k = &KindTally{}
			t.PerKind[c.Kind] = k
		}
		if _, ok := agreeKind[c.Kind]; !ok {
			agreeKind[c.Kind] = true
		}
		t.Checks++
		k.Checks++
		if c.Theirs != "" || c.Ours != "" {
			t.ChecksSet++
		}
		if c.Agree() {
			t.ChecksAgreeing++
			k.ChecksAgreeing++
		} else {
			agreeKind[c.Kind] = false
			all = false
		}
	}
	for kind, ok := range agreeKind {
		t.PerKind[kind].Cases++
		if ok {
			t.PerKind[kind].CasesAgreeing++
		}
	}
	if all {
		t.CasesAgreeing++
	}
}

// SortedKinds lists the kinds of t by name.
func SortedKinds(t Tally) []string { return sortedKeys(t.PerKind) }

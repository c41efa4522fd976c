package differential

import (
	"fmt"
	"regexp"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// RunBatch judges several seeds in one run of each side: egctl spends most
// of its time per run and per object (it validates every object against
// the CRDs), so one run over many cases costs much less than a run per
// case. The cases share one GatewayClass (Envoy Gateway translates one)
// and never refer to each other's namespaces, so each is judged as if
// alone; every check names its case's namespace. When the batch fails,
// the seeds run one by one, so that the error names the seed.
func RunBatch(o Oracle, seeds []uint64) ([]Outcome, error) {
	cases := make([]*gen.Case, len(seeds))
	for i, s := range seeds {
		cases[i] = gen.Generate(s, o.Features())
	}
	checks, err := Judge(o, merge(cases))
	if err != nil {
		out := make([]Outcome, 0, len(seeds))
		for _, s := range seeds {
			r, err := RunSeed(o, s)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		return out, nil
	}
	bySeed := map[uint64][]Check{}
	for _, c := range checks {
		s, ok := seedOf(c.Subject)
		if !ok {
			return nil, fmt.Errorf("check names no case: %s", c)
		}
		bySeed[s] = append(bySeed[s], c)
	}
	out := make([]Outcome, len(seeds))
	for i, c := range cases {
		out[i] = Outcome{Impl: o.Name(), Seed: c.Seed, Case: c, Checks: bySeed[c.Seed]}
	}
	return out, nil
}

// merge puts the cases' objects in one list under the first case's GatewayClass.
func merge(cases []*gen.Case) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	class := cases[0].Prefix
	for i, c := range cases {
		for _, o := range c.Objects() {
			switch o.GetKind() {
			case "GatewayClass":
				if i > 0 {
					continue
				}
			case "Gateway":
				o = o.DeepCopy()
				_ = unstructured.SetNestedField(o.Object, class, "spec", "gatewayClassName")
			}
			out = append(out, o)
		}
	}
	return out
}

var caseNamespace = regexp.MustCompile(`\bdf(\d+)-[a-z]\b`)

func seedOf(subject string) (uint64, bool) {
	m := caseNamespace.FindStringSubmatch(subject)
	if m == nil {
		return 0, false
	}
	s, err := strconv.ParseUint(m[1], 10, 64)
	return s, err == nil
}

// SeedRange lists n seeds from first.
func SeedRange(first, n uint64) []uint64 {
	var out []uint64
	for s := first; s < first+n; s++ {
		out = append(out, s)
	}
	return out
}

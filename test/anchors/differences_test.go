package anchors

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kuadrant/policy-machinery/machinery"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale"
)

// TestKnownDifferences: where the two sides differ on the full generated
// topology, by design of each (docs/benchmarks/anchors.md lists them); each
// check fails if the difference goes away, so that the report stays true.
func TestKnownDifferences(t *testing.T) {
	b := computeBoth(t, scale.Generate(scale.Options{Scale: 0.0025, Seed: 1}))
	for _, tc := range []struct {
		name  string
		check func(both) error
	}{
		{"Namespace policies: ours inserts the Namespace in paths, policy-machinery has no Namespace to attach them to", namespaceDifference},
		{"hostnames: policy-machinery links routes to a listener whose hostname they do not share", hostnameDifference},
		{"mesh routes: policy-machinery hangs them under nothing (ours: under their Service)", meshDifference},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.check(b); err != nil {
				t.Error(err)
			}
		})
	}
}

func namespaceDifference(b both) error {
	ours := 0
	for _, c := range b.ours {
		if strings.Contains(c.Via, "Namespace:") {
			ours++
		}
	}
	attached := 0
	for _, tg := range b.topology.Targetables().Items() {
		for _, p := range tg.Policies() {
			if po, ok := p.(*Policy); ok && isLevel(b, po, scale.LevelNamespace) {
				attached++
			}
		}
	}
	if ours == 0 || attached != 0 {
		return fmt.Errorf("ours has %d rule contexts via a Namespace (want some), policy-machinery attached Namespace policies %d times (want 0)", ours, attached)
	}
	return nil
}

func isLevel(b both, p *Policy, level string) bool {
	for _, o := range b.objs {
		if o.GetKind() == p.Kind && o.GetNamespace() == p.Namespace && o.GetName() == p.Name {
			return o.GetLabels()[scale.LevelLabel] == level
		}
	}
	return false
}

func hostnameDifference(b both) error {
	pm := 0
	for _, byPath := range b.pm {
		for _, pe := range byPath {
			if throughInternalListener(pe.Path) {
				pm++
			}
		}
	}
	if pm == 0 {
		return fmt.Errorf("policy-machinery has no effective policy through listener %s", scale.InternalListener)
	}
	return nil
}

func meshDifference(b both) error {
	targetables := b.topology.Targetables()
	for _, tg := range targetables.Items() {
		r, ok := tg.(*machinery.HTTPRoute)
		if !ok || len(r.Spec.ParentRefs) == 0 || r.Spec.ParentRefs[0].Kind == nil || *r.Spec.ParentRefs[0].Kind != "Service" {
			continue
		}
		if ps := targetables.Parents(r); len(ps) != 0 {
			return fmt.Errorf("mesh route %s has parents %v in policy-machinery's topology", r.GetLocator(), ps)
		}
		return nil
	}
	return fmt.Errorf("no mesh route in the topology")
}

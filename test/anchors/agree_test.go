package anchors

import (
	"context"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/kuadrant/policy-machinery/machinery"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale"
)

// agreeScale adds a case to TestSidesAgree: hack/bench-anchors.sh checks
// the sides agree at a scale with two Gateways (routes with two parents)
// before it measures them; the default cases have one, to stay fast.
var agreeScale = flag.Float64("agree-scale", 0, "also compare the sides at this scale (seed 1)")

// both computes every effective policy of objs on both sides.
type both struct {
	objs     []*unstructured.Unstructured
	ours     []RuleContext
	pm       Effective
	topology *machinery.Topology
}

func computeBoth(t *testing.T, objs []*unstructured.Unstructured) both {
	t.Helper()
	keys, outs, err := ComputeOurs(objs)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := OursRuleContexts(keys, outs, routeRules(objs))
	if err != nil {
		t.Fatal(err)
	}
	in, err := Convert(objs)
	if err != nil {
		t.Fatal(err)
	}
	topology, err := BuildTopology(in)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var prog Progress
	pm, err := ComputeEffective(ctx, topology, Kinds(), &prog)
	if err != nil {
		t.Fatal(err)
	}
	return both{objs: objs, ours: ours, pm: pm, topology: topology}
}

// routeRules lists each route's rule names by "namespace/name".
func routeRules(objs []*unstructured.Unstructured) map[string][]string {
	out := map[string][]string{}
	for _, o := range objs {
		if o.GetKind() != "HTTPRoute" {
			continue
		}
		rules, _, _ := unstructured.NestedSlice(o.Object, "spec", "rules")
		for _, r := range rules {
			name, _ := r.(map[string]interface{})["name"].(string)
			key := o.GetNamespace() + "/" + o.GetName()
			out[key] = append(out[key], name)
		}
	}
	return out
}

func withoutLevel(objs []*unstructured.Unstructured, level string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetLabels()[scale.LevelLabel] != level {
			out = append(out, o)
		}
	}
	return out
}

// throughInternalListener: a path through the listener whose hostname no
// generated route shares, which policy-machinery links routes to anyway.
func throughInternalListener(path []machinery.Targetable) bool {
	for _, t := range path {
		if l, ok := t.(*machinery.Listener); ok && string(l.Name) == scale.InternalListener {
			return true
		}
	}
	return false
}

// TestSidesAgree: on small generated topologies without Namespace policies
// (policy-machinery's topology has no Namespaces to attach them to), every
// effective policy of a route rule that both compute — ours in the contexts
// under the GatewayClass, policy-machinery on the paths from it that do
// not cross the internal listener — has the same via (policy-bearing nodes
// of the path), the same merged spec and the same contributing policies;
// and neither side has a context the other lacks.
func TestSidesAgree(t *testing.T) {
	type tcase struct {
		scale float64
		seed  uint64
	}
	cases := []tcase{{0.0025, 1}, {0.0025, 3}, {0.0025, 4}, {0.0025, 5}, {0.005, 1}}
	if *agreeScale > 0 {
		cases = append(cases, tcase{*agreeScale, 1})
	}
	for _, tc := range cases {
		t.Run("", func(t *testing.T) {
			objs := withoutLevel(scale.Generate(scale.Options{Scale: tc.scale, Seed: tc.seed}), scale.LevelNamespace)
			b := computeBoth(t, objs)
			ours := map[string]RuleContext{}
			for _, c := range b.ours {
				if strings.HasPrefix(c.Via, "GatewayClass:") {
					ours[c.Key()] = c
				}
			}
			pm := map[string]RuleContext{}
			for _, c := range PMRuleContexts(b.pm, throughInternalListener) {
				if prev, ok := pm[c.Key()]; ok && prev != c {
					t.Errorf("policy-machinery: two paths with via %s differ:\n%+v\n%+v", c.Key(), prev, c)
				}
				pm[c.Key()] = c
			}
			multi := 0
			for k, o := range ours {
				p, ok := pm[k]
				switch {
				case !ok:
					t.Errorf("only ours: %s", k)
				case p.Spec != o.Spec || p.Sources != o.Sources:
					t.Errorf("%s:\n ours %s from %s\n pm   %s from %s", k, o.Spec, o.Sources, p.Spec, p.Sources)
				}
				if strings.Contains(o.Sources, ",") {
					multi++
				}
			}
			for k := range pm {
				if _, ok := ours[k]; !ok {
					t.Errorf("only policy-machinery: %s", k)
				}
			}
			// The harness must have compared something, merges included.
			if len(ours) < 100 || multi == 0 {
				t.Errorf("compared %d contexts, %d with several contributing policies: too few", len(ours), multi)
			}
			t.Logf("scale %v seed %d: %d contexts agree, %d with several contributing policies", tc.scale, tc.seed, len(ours), multi)
		})
	}
}

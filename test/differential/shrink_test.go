package differential

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// echoOracle is a stand-in implementation for the shrinker's test: its
// program is cat, and it "disagrees" while the objects it read back hold a
// Gateway and a policy whose spec has the field it watches.
type echoOracle struct{ field string }

func (echoOracle) Name() string               { return "echo" }
func (echoOracle) Features() gen.Features     { return gen.All }
func (echoOracle) Command() ([]string, error) { return []string{"cat"}, nil }
func (echoOracle) Input(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	return objs, nil
}
func (echoOracle) Ours(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	return objs, nil
}

func (e echoOracle) Compare(_ []*unstructured.Unstructured, _ *Ours, out []byte) ([]Check, error) {
	objs, err := ParseYAML(out)
	if err != nil {
		return nil, err
	}
	gw, pol := false, false
	for _, o := range objs {
		if o.GetKind() == "Gateway" {
			gw = true
		}
		if _, ok, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", e.field); ok && o.GetKind() == gen.BTP {
			pol = true
		}
	}
	c := Check{Kind: gen.BTP, Field: e.field, Theirs: "x"}
	if !gw || !pol {
		c.Ours = "x"
	}
	return []Check{c}, nil
}

// TestShrink: the shrinker drops everything the disagreement does not need
// (one Gateway, one policy, and of that policy's spec only the watched field).
func TestShrink(t *testing.T) {
	ran := 0
	for seed := uint64(1); seed < 40 && ran < 3; seed++ {
		c := gen.Generate(seed, gen.All)
		var field string
		for _, p := range c.Policies {
			if p.GetKind() != gen.BTP {
				continue
			}
			for k := range p.Object["spec"].(map[string]any) {
				if k == "timeout" || k == "loadBalancer" {
					field = k
				}
			}
		}
		if field == "" {
			continue
		}
		ran++
		o := echoOracle{field}
		checks, err := Judge(o, c.Objects())
		if err != nil || len(checks) != 1 || checks[0].Agree() {
			t.Fatalf("seed %d: the full case should disagree: %v %v", seed, checks, err)
		}
		small, smallChecks := Shrink(o, c.Objects(), checks[0])
		if len(smallChecks) != 1 || smallChecks[0].Agree() {
			t.Fatalf("seed %d: the shrunk case agrees", seed)
		}
		if len(small) != 2 {
			t.Errorf("seed %d: shrunk to %d objects, want a Gateway and a policy", seed, len(small))
		}
		for _, p := range small {
			if spec, ok := p.Object["spec"].(map[string]any); ok && p.GetKind() == gen.BTP && len(spec) != 1 {
				t.Errorf("seed %d: the policy keeps %v, want only %s", seed, spec, field)
			}
		}
	}
	if ran < 3 {
		t.Fatalf("only %d seeds had a BackendTrafficPolicy", ran)
	}
}

// TestDisagreesLike: a shrink keeps only candidates that disagree as the
// original does, and leaves those a known class explains.
func TestDisagreesLike(t *testing.T) {
	RegisterKnown(KnownClass{Name: "test-class", Impl: "shrink-test", Match: func(c Check, _ []*unstructured.Unstructured) bool {
		return c.Field == "explained"
	}})
	want := Check{Kind: gen.BTP, Field: "Conflicted", Theirs: "Conflicted"}
	for _, tc := range []struct {
		name string
		c    Check
		like bool
	}{
		{"same shape", Check{Kind: gen.BTP, Field: "Conflicted", Theirs: "Conflicted"}, true},
		{"agrees", Check{Kind: gen.BTP, Field: "Conflicted", Theirs: "Conflicted", Ours: "Conflicted"}, false},
		{"the opposite side set", Check{Kind: gen.BTP, Field: "Conflicted", Ours: "Conflicted"}, false},
		{"another kind", Check{Kind: gen.SP, Field: "Conflicted", Theirs: "Conflicted"}, false},
		{"another field", Check{Kind: gen.BTP, Field: "/timeout", Theirs: "Conflicted"}, false},
		{"explained", Check{Kind: gen.BTP, Field: "explained", Theirs: "x"}, false},
	} {
		w := want
		if tc.name == "explained" {
			w = Check{Kind: gen.BTP, Field: "explained", Theirs: "y"}
		}
		if got := disagreesLike("shrink-test", []Check{tc.c}, nil, w, ""); got != tc.like {
			t.Errorf("%s: disagreesLike = %v, want %v", tc.name, got, tc.like)
		}
	}
}

// TestDisagreesLikeToward: shrinking toward a known class keeps only
// candidates whose disagreements are all of that class, one like want.
func TestDisagreesLikeToward(t *testing.T) {
	RegisterKnown(KnownClass{Name: "toward-class", Impl: "shrink-toward-test", Match: func(c Check, _ []*unstructured.Unstructured) bool {
		return c.Field == "explained"
	}})
	want := Check{Kind: gen.BTP, Field: "explained", Theirs: "x"}
	of := Check{Kind: gen.BTP, Field: "explained", Theirs: "y"}
	agree := Check{Kind: gen.BTP, Field: "/timeout", Theirs: "1s", Ours: "1s"}
	other := Check{Kind: gen.BTP, Field: "/timeout", Theirs: "1s"}
	for _, tc := range []struct {
		name   string
		checks []Check
		like   bool
	}{
		{"of the class", []Check{of, agree}, true},
		{"of the class, the opposite side set", []Check{{Kind: gen.BTP, Field: "explained", Ours: "y"}}, false},
		{"of the class, another kind", []Check{{Kind: gen.SP, Field: "explained", Theirs: "y"}}, false},
		{"of the class beside an unexplained one", []Check{of, other}, false},
		{"no disagreement left", []Check{agree}, false},
		{"unexplained only", []Check{other}, false},
	} {
		if got := disagreesLike("shrink-toward-test", tc.checks, nil, want, "toward-class"); got != tc.like {
			t.Errorf("%s: disagreesLike = %v, want %v", tc.name, got, tc.like)
		}
	}
}

// towardOracle is echoOracle under a name of its own, whose disagreement
// is of a known class.
type towardOracle struct{ echoOracle }

func (towardOracle) Name() string { return "echo-toward" }

// TestShrinkTowardKeepsTopology: shrinking toward a known class trims the
// policies' fields but drops topology objects only whole, so that the case
// stays one kube-apiserver accepts.
func TestShrinkTowardKeepsTopology(t *testing.T) {
	RegisterKnown(KnownClass{Name: "echo-class", Impl: "echo-toward", Match: func(Check, []*unstructured.Unstructured) bool { return true }})
	for seed := uint64(1); seed < 40; seed++ {
		c := gen.Generate(seed, gen.All)
		o := towardOracle{echoOracle{"timeout"}}
		checks, err := Judge(o, c.Objects())
		if err != nil || len(checks) != 1 || checks[0].Agree() {
			continue
		}
		small, _ := ShrinkToward(o, c.Objects(), checks[0], "echo-class")
		for _, s := range small {
			if s.GetKind() != "Gateway" {
				continue
			}
			for _, orig := range c.Topology {
				if orig.GetKind() == "Gateway" && orig.GetNamespace() == s.GetNamespace() && orig.GetName() == s.GetName() &&
					!equality.Semantic.DeepEqual(orig.Object["spec"], s.Object["spec"]) {
					t.Errorf("seed %d: Gateway %s trimmed: %v, was %v", seed, s.GetName(), s.Object["spec"], orig.Object["spec"])
				}
			}
		}
		return
	}
	t.Fatal("no seed below 40 has a BackendTrafficPolicy with a timeout")
}

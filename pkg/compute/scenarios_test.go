package compute

import (
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/jsontest"
	"github.com/effectivepolicy-dev/effectivepolicy/internal/scenariofile"
)

const scenarioDir = "../../test/scenarios"

// loadScenario returns the objects of one scenario: CRDs, topology, then the
// policies one second apart in file order.
func loadScenario(t testing.TB, dir string) []*unstructured.Unstructured {
	var objs []*unstructured.Unstructured
	crds, _ := filepath.Glob(filepath.Join(scenarioDir, "crds", "*.yaml"))
	for _, f := range crds {
		objs = append(objs, parseDocs(t, readFile(t, f))...)
	}
	objs = append(objs, parseDocs(t, readFile(t, filepath.Join(scenarioDir, "topology.yaml")))...)
	objs = append(objs, stamp(parseDocs(t, readFile(t, filepath.Join(dir, "policies.yaml"))), 0)...)
	return objs
}

func TestScenarios(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(scenarioDir, "*", "expected.json"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no scenarios found under %s: %v", scenarioDir, err)
	}
	for _, exp := range dirs {
		dir := filepath.Dir(exp)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			want := readExpected(t, exp)
			got, err := ComputeAll(loadScenario(t, dir), Options{})
			if err != nil {
				t.Fatal(err)
			}
			checkExpected(t, got, want, true)
		})
	}
}

// checkExpected compares the outputs of a computation with a scenario's expected.json. With
// strictFieldSources an effective entry that lists no fieldSources asserts that there are none;
// otherwise it asserts nothing about them (the implementation cases leave them out where a list is
// merged item by item).
func checkExpected(t *testing.T, got map[Key]runtime.Object, want scenariofile.Expected, strictFieldSources bool) {
	t.Helper()
	checkExpectedAbsent(t, got, want)
	checkExpectedEffective(t, got, want, strictFieldSources)
	checkExpectedSources(t, got, want)
	checkExpectedEffectiveCounts(t, got, want)
}

// checkExpectedAbsent checks that the objects want lists as absent have no output.
func checkExpectedAbsent(t *testing.T, got map[Key]runtime.Object, want scenariofile.Expected) {
	t.Helper()
	for _, a := range want.Absent {
		if o, ok := got[Key{a.Namespace, a.Name}]; ok {
			t.Errorf("%s/%s should be absent, got\n%s", a.Namespace, a.Name, dump(o))
		}
	}
}

// checkExpectedEffective checks the spec, and the fieldSources as checkExpected says, of each
// effective entry want lists, found by its via and section.
func checkExpectedEffective(t *testing.T, got map[Key]runtime.Object, want scenariofile.Expected, strictFieldSources bool) {
	t.Helper()
	for _, e := range want.Effective {
		obj, ok := got[Key{e.Namespace, e.Name}]
		if !ok {
			t.Errorf("%s/%s missing", e.Namespace, e.Name)
			continue
		}
		tp := findTP(obj, e.Target.Kind, e.Policy.Group, e.Policy.Kind)
		if tp == nil {
			t.Errorf("%s/%s: no %s.%s on %s\n%s", e.Namespace, e.Name, e.Policy.Kind, e.Policy.Group, e.Target.Kind, dump(obj))
			continue
		}
		found := false
		for _, eff := range tp.Effective {
			if len(eff.Via) != len(e.Via) || eff.SectionName != e.SectionName {
				continue
			}
			match := true
			for i, v := range e.Via {
				if eff.Via[i].Kind != v.Kind || eff.Via[i].Name != v.Name || eff.Via[i].SectionName != v.SectionName {
					match = false
				}
			}
			if !match {
				continue
			}
			found = true
			if g, w := jsontest.Canonical(t, eff.Spec.Raw), jsontest.Canonical(t, []byte(e.Spec)); g != w {
				t.Errorf("%s/%s %s via %v: spec %s, want %s", e.Namespace, e.Name, e.Target.Kind, e.Via, g, w)
			}
			if e.FieldSources == nil && !strictFieldSources {
				continue
			}
			if g, w := jsontest.Canonical(t, eff.FieldSources), jsontest.Canonical(t, e.FieldSources); g != w {
				t.Errorf("%s/%s %s via %v: fieldSources %s, want %s", e.Namespace, e.Name, e.Target.Kind, e.Via, g, w)
			}
		}
		if !found {
			t.Errorf("%s/%s %s: no effective entry via %v\n%s", e.Namespace, e.Name, e.Target.Kind, e.Via, dump(obj))
		}
	}
}

// checkExpectedSources checks the outcome of each source want lists.
func checkExpectedSources(t *testing.T, got map[Key]runtime.Object, want scenariofile.Expected) {
	t.Helper()
	for _, s := range want.Sources {
		obj, ok := got[Key{s.Namespace, s.Name}]
		if !ok {
			t.Errorf("%s/%s missing", s.Namespace, s.Name)
			continue
		}
		tp := findTP(obj, s.Target.Kind, s.Policy.Group, s.Policy.Kind)
		if tp == nil {
			t.Errorf("%s/%s: no %s.%s on %s", s.Namespace, s.Name, s.Policy.Kind, s.Policy.Group, s.Target.Kind)
			continue
		}
		found := false
		for _, src := range tp.Sources {
			name := src.Name
			if src.Namespace != "" {
				name = src.Namespace + "/" + src.Name
			}
			if name == s.Source {
				found = true
				if string(src.Outcome) != s.Outcome {
					t.Errorf("%s/%s %s: source %s outcome %s (%s), want %s", s.Namespace, s.Name, s.Target.Kind, s.Source, src.Outcome, src.Message, s.Outcome)
				}
			}
		}
		if !found {
			t.Errorf("%s/%s %s: no source %s\n%s", s.Namespace, s.Name, s.Target.Kind, s.Source, dump(obj))
		}
	}
}

// checkExpectedEffectiveCounts checks how many effective entries a target has for a policy kind,
// where want says.
func checkExpectedEffectiveCounts(t *testing.T, got map[Key]runtime.Object, want scenariofile.Expected) {
	t.Helper()
	for _, c := range want.EffectiveCount {
		obj, ok := got[Key{c.Namespace, c.Name}]
		if !ok {
			t.Errorf("%s/%s missing", c.Namespace, c.Name)
			continue
		}
		tp := findTP(obj, c.Target.Kind, c.Policy.Group, c.Policy.Kind)
		if n := 0; tp != nil {
			n = len(tp.Effective)
			if n != c.Count {
				t.Errorf("%s/%s %s: %d effective entries of %s, want %d\n%s", c.Namespace, c.Name, c.Target.Kind, n, c.Policy.Kind, c.Count, dump(obj))
			}
		} else if c.Count != 0 {
			t.Errorf("%s/%s: no %s on %s, want %d effective entries", c.Namespace, c.Name, c.Policy.Kind, c.Target.Kind, c.Count)
		}
	}
}

package badinput

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// ---- baseline ----

// baseline returns the sane cluster: Gateway API CRDs, the ColorPolicy CRDs,
// the reference topology and the GEP-713 example 2 policies.
func baseline(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	objs := readDocs(t, "gateway-crds.yaml")
	objs = append(objs, readDocs(t, filepath.Join(scenarioDir, "crds", "colorpolicies.yaml"))...)
	objs = append(objs, readDocs(t, filepath.Join(scenarioDir, "topology.yaml"))...)
	pols := readDocs(t, filepath.Join(scenarioDir, "gep713-example2-defaults-overrides", "policies.yaml"))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, o := range pols {
		o.SetCreationTimestamp(metav1.NewTime(start.Add(time.Duration(i) * time.Second)))
	}
	return append(objs, pols...)
}

// ---- outputs ----

func targetsOf(obj runtime.Object) []v1alpha1.Target {
	switch o := obj.(type) {
	case *v1alpha1.EffectivePolicy:
		return o.Targets
	case *v1alpha1.ClusterEffectivePolicy:
		return o.Targets
	}
	return nil
}

// canon renders targets as JSON (through a generic value, so RawExtension
// formatting does not count). Every output must decode with the standard
// decoder, as clients decode it (its depth limit included), also inside a
// list (two more levels).
func canon(t *testing.T, targets []v1alpha1.Target) string {
	t.Helper()
	data, err := json.Marshal(targets)
	if err != nil {
		t.Fatal(err)
	}
	var v interface{}
	d := json.NewDecoder(bytes.NewReader([]byte(`{"items":[{"targets":` + string(data) + `}]}`)))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Errorf("an output does not decode in a list: %v", err)
		return string(data)
	}
	v = v.(map[string]interface{})["items"].([]interface{})[0].(map[string]interface{})["targets"]
	data, _ = json.Marshal(v)
	return string(data)
}

func computeAllEngine(t *testing.T, e *compute.Engine) map[compute.Key][]v1alpha1.Target {
	t.Helper()
	out := map[compute.Key][]v1alpha1.Target{}
	for _, k := range e.Keys() {
		o, ok := e.Compute(k)
		if !ok {
			t.Errorf("Keys lists %s but Compute says it is absent", k)
			continue
		}
		out[k] = targetsOf(o)
	}
	return out
}

func feed(e *compute.Engine, objs []*unstructured.Unstructured) {
	for _, o := range objs {
		if isCRD(o) {
			e.Upsert(o.DeepCopy())
		}
	}
	for _, o := range objs {
		if !isCRD(o) {
			e.Upsert(o.DeepCopy())
		}
	}
}

func isCRD(o *unstructured.Unstructured) bool {
	return o.GetKind() == "CustomResourceDefinition"
}

// stripInvalid removes the Invalid sources of policy (gk, ns/name) from
// targets, and the policy-kind entries and targets that end up empty.
func stripInvalid(targets []v1alpha1.Target, gk schema.GroupKind, policy string) []v1alpha1.Target {
	var out []v1alpha1.Target
	for _, tg := range targets {
		tg := *tg.DeepCopy()
		var pols []v1alpha1.TargetPolicy
		for _, tp := range tg.Policies {
			if tp.Group == gk.Group && tp.Kind == gk.Kind {
				var srcs []v1alpha1.PolicySource
				for _, s := range tp.Sources {
					if sourceName(s) == policy && s.Outcome == v1alpha1.OutcomeInvalid {
						continue
					}
					srcs = append(srcs, s)
				}
				tp.Sources = srcs
				if len(srcs) == 0 && len(tp.Effective) == 0 {
					continue
				}
			}
			pols = append(pols, tp)
		}
		tg.Policies = pols
		if len(pols) > 0 {
			out = append(out, tg)
		}
	}
	return out
}

func sourceName(s v1alpha1.PolicySource) string {
	if s.Namespace == "" {
		return s.Name
	}
	return s.Namespace + "/" + s.Name
}

// findSources returns the sources of policy (gk, ns/name) in all outputs.
func findSources(outs map[compute.Key][]v1alpha1.Target, gk schema.GroupKind, policy string) []v1alpha1.PolicySource {
	var found []v1alpha1.PolicySource
	for _, targets := range outs {
		for _, tg := range targets {
			for _, tp := range tg.Policies {
				if tp.Group != gk.Group || tp.Kind != gk.Kind {
					continue
				}
				for _, s := range tp.Sources {
					if sourceName(s) == policy {
						found = append(found, s)
					}
				}
			}
		}
	}
	return found
}

// check compares outs (baseline + hostile input) against base.
func check(t *testing.T, c *tcase, base, outs map[compute.Key][]v1alpha1.Target) {
	t.Helper()
	stripped := checkExpectations(t, c, outs)
	checkAgainstBaseline(t, c, base, stripped)
}

// checkExpectations checks how outs list each policy the case expects something of, and returns
// outs without the Invalid sources of the policies expected to be invalid.
func checkExpectations(t *testing.T, c *tcase, outs map[compute.Key][]v1alpha1.Target) map[compute.Key][]v1alpha1.Target {
	t.Helper()
	stripped := map[compute.Key][]v1alpha1.Target{}
	for k, v := range outs {
		stripped[k] = v
	}
	for _, x := range c.expects {
		srcs := findSources(outs, x.gk, x.policy)
		switch x.what {
		case "invalid":
			if len(srcs) == 0 {
				t.Errorf("%s %s: not listed anywhere, want an Invalid source", x.gk, x.policy)
			}
			for _, s := range srcs {
				if s.Outcome != v1alpha1.OutcomeInvalid || strings.TrimSpace(s.Message) == "" {
					t.Errorf("%s %s: outcome %s message %q, want Invalid with a message", x.gk, x.policy, s.Outcome, s.Message)
				}
			}
			for k, v := range stripped {
				stripped[k] = stripInvalid(v, x.gk, x.policy)
				if len(stripped[k]) == 0 {
					delete(stripped, k)
				}
			}
		case "unchanged":
			// Only the comparison with the baseline below.
		case "absent":
			if len(srcs) > 0 {
				t.Errorf("%s %s: listed (%v), want absent", x.gk, x.policy, srcs)
			}
		case "listed":
			if len(srcs) == 0 {
				t.Errorf("%s %s: not listed anywhere", x.gk, x.policy)
			}
			for _, s := range srcs {
				if s.Outcome == v1alpha1.OutcomeInvalid {
					t.Errorf("%s %s: Invalid (%s), want a valid source", x.gk, x.policy, s.Message)
				}
			}
		default:
			t.Fatalf("unknown expectation %q", x.what)
		}
	}
	return stripped
}

// checkAgainstBaseline compares stripped, the outputs with the hostile Invalid sources taken out,
// with base.
func checkAgainstBaseline(t *testing.T, c *tcase, base, stripped map[compute.Key][]v1alpha1.Target) {
	t.Helper()
	// Every baseline output is byte-for-byte what it was (once the hostile
	// Invalid sources are taken out), and nothing else appears, except the
	// keys the case says may change.
	var keys []compute.Key
	for k := range base {
		keys = append(keys, k)
	}
	for k := range stripped {
		if _, ok := base[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	for k := range c.changed {
		b, inBase := base[k]
		g, inGot := stripped[k]
		if inBase == inGot && (!inBase || canon(t, b) == canon(t, g)) {
			t.Errorf("%s: the case says it changes, but it does not", k)
		}
	}
	for _, k := range keys {
		if c.changed[k] {
			continue
		}
		b, inBase := base[k]
		g, inGot := stripped[k]
		switch {
		case !inGot:
			t.Errorf("%s: baseline output disappeared", k)
		case !inBase:
			t.Errorf("%s: unexpected output %s", k, clip(canon(t, g)))
		default:
			if cb, cg := canon(t, b), canon(t, g); cb != cg {
				t.Errorf("%s: baseline output changed\n got  %s\n want %s", k, clip(cg), clip(cb))
			}
		}
	}
}

func clip(s string) string {
	if len(s) > 600 {
		return s[:600] + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return s
}

func equalOutputs(t *testing.T, a, b map[compute.Key][]v1alpha1.Target) []string {
	t.Helper()
	var d []string
	for k, v := range a {
		w, ok := b[k]
		if !ok {
			d = append(d, "only in first: "+k.String())
		} else if canon(t, v) != canon(t, w) {
			d = append(d, "differs: "+k.String())
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			d = append(d, "only in second: "+k.String())
		}
	}
	sort.Strings(d)
	return d
}

//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/scenariofile"
	v1alpha1 "github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// The reference scenarios of test/scenarios (see its README): apply crds/colorpolicies.yaml, then
// topology.yaml, then each scenario's policies one second apart, and check expected.json through
// `kubectl get effectivepolicy -o json`. The scenarios share namespace "colors" and policy names,
// so each one starts by deleting the previous one's policies.

var scenarioPolicyKinds = "colorpolicies.colors.example.com,colorpolicies.direct.colors.example.com"

// getEffectivePolicy reads one EffectivePolicy through kubectl -o json; (nil, nil) when NotFound.
func getEffectivePolicy(namespace, name string) (*v1alpha1.EffectivePolicy, error) {
	out, errOut, err := kubectlRaw(nil, "get", "effectivepolicy", name, "-n", namespace, "-o", "json")
	if err != nil {
		if strings.Contains(errOut, "NotFound") {
			return nil, nil
		}
		return nil, fmt.Errorf("kubectl get effectivepolicy %s -n %s: %v: %s", name, namespace, err, errOut)
	}
	ep := &v1alpha1.EffectivePolicy{}
	if err := json.Unmarshal([]byte(out), ep); err != nil {
		return nil, fmt.Errorf("decoding effectivepolicy %s/%s: %v\n%s", namespace, name, err, out)
	}
	return ep, nil
}

func findTargetPolicy(ep *v1alpha1.EffectivePolicy, targetKind, group, kind string) *v1alpha1.TargetPolicy {
	for i := range ep.Targets {
		if ep.Targets[i].Kind != targetKind {
			continue
		}
		for j := range ep.Targets[i].Policies {
			p := &ep.Targets[i].Policies[j]
			if p.Group == group && p.Kind == kind {
				return p
			}
		}
	}
	return nil
}

func sameVia(got []v1alpha1.ObjectReference, want []scenariofile.Ref) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].Kind != want[i].Kind || got[i].Name != want[i].Name || got[i].SectionName != want[i].SectionName {
			return false
		}
	}
	return true
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func viaString(v []v1alpha1.ObjectReference) string {
	var s []string
	for _, r := range v {
		x := r.Kind + "/" + r.Name
		if r.SectionName != "" {
			x += "#" + r.SectionName
		}
		s = append(s, x)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// checkScenario returns every way the served objects differ from expected.json.
func checkScenario(exp scenariofile.Expected) []string {
	var problems []string
	cache := map[string]*v1alpha1.EffectivePolicy{}
	get := func(ns, name string) (*v1alpha1.EffectivePolicy, error) {
		k := ns + "/" + name
		if ep, ok := cache[k]; ok {
			return ep, nil
		}
		ep, err := getEffectivePolicy(ns, name)
		if err == nil {
			cache[k] = ep
		}
		return ep, err
	}
	for _, a := range exp.Absent {
		ep, err := get(a.Namespace, a.Name)
		if err != nil {
			problems = append(problems, err.Error())
		} else if ep != nil {
			problems = append(problems, fmt.Sprintf("absent %s/%s: exists (want NotFound)", a.Namespace, a.Name))
		}
	}
	for _, e := range exp.Effective {
		problems = append(problems, checkScenarioEffective(get, e)...)
	}
	for _, s := range exp.Sources {
		problems = append(problems, checkScenarioSource(get, s)...)
	}
	for _, n := range exp.EffectiveCount {
		ep, err := get(n.Namespace, n.Name)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		got := len(implTP(ep, n.Target.Kind, n.Policy).effective())
		if got != n.Count {
			problems = append(problems, fmt.Sprintf("%s/%s %s: %d effective entries of %s, want %d", n.Namespace, n.Name, n.Target.Kind, got, n.Policy.Kind, n.Count))
		}
	}
	return problems
}

// getEffectivePolicyFunc reads an EffectivePolicy as getEffectivePolicy does.
type getEffectivePolicyFunc func(ns, name string) (*v1alpha1.EffectivePolicy, error)

// checkScenarioEffective returns how the served objects differ from e.
func checkScenarioEffective(get getEffectivePolicyFunc, e scenariofile.Effective) []string {
	var problems []string
	where := fmt.Sprintf("effective %s/%s %s %s/%s via %v", e.Namespace, e.Name, e.Target.Kind, e.Policy.Group, e.Policy.Kind, e.Via)
	ep, err := get(e.Namespace, e.Name)
	if err != nil || ep == nil {
		problems = append(problems, fmt.Sprintf("%s: EffectivePolicy missing (%v)", where, err))
		return problems
	}
	tp := findTargetPolicy(ep, e.Target.Kind, e.Policy.Group, e.Policy.Kind)
	if tp == nil {
		problems = append(problems, where+": target/policy kind not listed")
		return problems
	}
	var found *v1alpha1.EffectiveSpec
	var vias []string
	for i := range tp.Effective {
		vias = append(vias, viaString(tp.Effective[i].Via))
		if sameVia(tp.Effective[i].Via, e.Via) && tp.Effective[i].SectionName == e.SectionName {
			found = &tp.Effective[i]
		}
	}
	if found == nil {
		problems = append(problems, fmt.Sprintf("%s: no effective entry with that via (have %v)", where, vias))
		return problems
	}
	if !jsonEqual(found.Spec.Raw, e.Spec) {
		problems = append(problems, fmt.Sprintf("%s: spec %s, want %s", where, found.Spec.Raw, e.Spec))
	}
	want := e.FieldSources
	if want == nil {
		want = map[string]string{}
	}
	got := found.FieldSources
	if got == nil {
		got = map[string]string{}
	}
	if !reflect.DeepEqual(got, want) {
		problems = append(problems, fmt.Sprintf("%s: fieldSources %v, want %v", where, got, want))
	}
	return problems
}

// checkScenarioSource returns how the served objects differ from s.
func checkScenarioSource(get getEffectivePolicyFunc, s scenariofile.Source) []string {
	var problems []string
	where := fmt.Sprintf("source %s in %s/%s %s %s/%s", s.Source, s.Namespace, s.Name, s.Target.Kind, s.Policy.Group, s.Policy.Kind)
	ep, err := get(s.Namespace, s.Name)
	if err != nil || ep == nil {
		problems = append(problems, fmt.Sprintf("%s: EffectivePolicy missing (%v)", where, err))
		return problems
	}
	tp := findTargetPolicy(ep, s.Target.Kind, s.Policy.Group, s.Policy.Kind)
	if tp == nil {
		problems = append(problems, where+": target/policy kind not listed")
		return problems
	}
	var outcomes []string
	ok := false
	for _, src := range tp.Sources {
		name := src.Name
		if src.Namespace != "" {
			name = src.Namespace + "/" + src.Name
		}
		if name != s.Source {
			continue
		}
		outcomes = append(outcomes, string(src.Outcome))
		if string(src.Outcome) == s.Outcome {
			ok = true
		}
	}
	if !ok {
		problems = append(problems, fmt.Sprintf("%s: outcomes %v, want %s", where, outcomes, s.Outcome))
	}
	return problems
}

var docSeparator = regexp.MustCompile(`(?m)^---\s*$`)

// yamlDocuments splits a multi-document YAML file, dropping documents with comments only.
func yamlDocuments(b []byte) []string {
	var docs []string
	for _, d := range docSeparator.Split(string(b), -1) {
		meaningful := false
		for _, l := range strings.Split(d, "\n") {
			if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
				meaningful = true
				break
			}
		}
		if meaningful {
			docs = append(docs, d)
		}
	}
	return docs
}

func TestScenarios(t *testing.T) {
	dir := filepath.Join(repoRoot, "test", "scenarios")
	applyColorPolicyCRDs(t)
	kubectl(t, "apply", "-f", filepath.Join(dir, "topology.yaml"))

	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var scenarios []string
	for _, e := range entries {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), "expected.json")); err == nil {
				scenarios = append(scenarios, e.Name())
			}
		}
	}
	sort.Strings(scenarios)
	if len(scenarios) == 0 {
		t.Fatal("no scenarios found under test/scenarios")
	}
	for _, name := range scenarios {
		t.Run(name, func(t *testing.T) {
			exp, err := scenariofile.Read(filepath.Join(dir, name, "expected.json"))
			if err != nil {
				t.Fatal(err)
			}
			policies, err := os.ReadFile(filepath.Join(dir, name, "policies.yaml"))
			if err != nil {
				t.Fatal(err)
			}

			// A clean slate: no policy in "colors", hence no EffectivePolicy there.
			kubectl(t, "delete", scenarioPolicyKinds, "--all", "-n", "colors", "--wait=true")
			eventually(t, 60*time.Second, "no EffectivePolicy left in colors", func() error {
				out, errOut, err := kubectlRaw(nil, "get", "effectivepolicies", "-n", "colors", "-o", "name")
				if err != nil {
					return fmt.Errorf("%v: %s", err, errOut)
				}
				if strings.TrimSpace(out) != "" {
					return fmt.Errorf("still listed: %s", out)
				}
				return nil
			})

			for i, doc := range yamlDocuments(policies) {
				if i > 0 {
					time.Sleep(1100 * time.Millisecond) // a later creationTimestamp (second resolution)
				}
				kubectlApply(t, doc)
			}

			var problems []string
			deadline := time.Now().Add(60 * time.Second)
			for {
				if problems = checkScenario(exp); len(problems) == 0 {
					return
				}
				if time.Now().After(deadline) {
					break
				}
				time.Sleep(time.Second)
			}
			for _, p := range problems {
				t.Error(p)
			}
			out, _, _ := kubectlRaw(nil, "get", "effectivepolicies", "-n", "colors", "-o", "yaml")
			t.Logf("served EffectivePolicies in colors:\n%s", out)
		})
	}
	// Leave nothing behind for later tests.
	_, _, _ = kubectlRaw(nil, "delete", scenarioPolicyKinds, "--all", "-n", "colors", "--wait=true")
}

package differential

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// KnownCaseFile marks a test/upstream case as the regression case of a
// known class: its expected.json is our answer (so the engine's case tests
// run it as any other), and this file says where the implementation's own
// answer differs and which class explains it (TestKnownCases).
const KnownCaseFile = "known.json"

// A KnownCase is a known.json.
type KnownCase struct {
	Class string `json:"class"`
	Impl  string `json:"impl"`
	// SameSecond are the policies ("Kind namespace/name") created in the
	// same second as the policy before them in policies.yaml. The engine's
	// case tests and the end-to-end run stamp policies one second apart,
	// which orders them as a same-second tie does (namespace/name): our
	// answer is the same either way, the implementation's need not be.
	SameSecond  []string          `json:"sameSecond,omitempty"`
	Differences []KnownDifference `json:"differences"`
}

// A KnownDifference is one check on which the implementation and we differ.
type KnownDifference struct {
	Kind    string `json:"kind"`
	Subject string `json:"subject"`
	Field   string `json:"field"`
	Target  string `json:"target,omitempty"`
	Policy  string `json:"policy,omitempty"`
	Theirs  string `json:"theirs"`
	Ours    string `json:"ours"`
}

func (d KnownDifference) key() string { return d.Kind + "\x00" + d.Subject + "\x00" + d.Field }

func checkKey(c Check) string { return c.Kind + "\x00" + c.Subject + "\x00" + c.Field }

func nodeString(n Node) string {
	if n == (Node{}) {
		return ""
	}
	s := n.Kind + " " + n.Namespace + "/" + n.Name
	if n.Section != "" {
		s += "#" + n.Section
	}
	return s
}

// ReadCase reads a case folder: topology.yaml, then policies.yaml with the
// policies stamped one second apart from gen.BaseTime, as the engine's case
// tests stamp them, but those known.json's SameSecond names in the second
// of the policy before them. The KnownCase is zero without a known.json.
func ReadCase(dir string) ([]*unstructured.Unstructured, KnownCase, error) {
	var kc KnownCase
	if b, err := os.ReadFile(filepath.Join(dir, KnownCaseFile)); err == nil {
		if err := json.Unmarshal(b, &kc); err != nil {
			return nil, kc, fmt.Errorf("%s: %w", filepath.Join(dir, KnownCaseFile), err)
		}
	} else if !os.IsNotExist(err) {
		return nil, kc, err
	}
	var objs []*unstructured.Unstructured
	for _, f := range []string{"topology.yaml", "policies.yaml"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return nil, kc, err
		}
		docs, err := ParseYAML(b)
		if err != nil {
			return nil, kc, fmt.Errorf("%s: %w", filepath.Join(dir, f), err)
		}
		if f == "policies.yaml" {
			stampPolicies(docs, kc.SameSecond)
		}
		objs = append(objs, docs...)
	}
	return objs, kc, nil
}

func stampPolicies(pols []*unstructured.Unstructured, sameSecond []string) {
	same := map[string]bool{}
	for _, s := range sameSecond {
		same[s] = true
	}
	t := gen.BaseTime
	for i, p := range pols {
		if i > 0 && !same[policyID(p)] {
			t = t.Add(time.Second)
		}
		p.SetCreationTimestamp(metav1.NewTime(t))
	}
}

func policyID(p *unstructured.Unstructured) string {
	return p.GetKind() + " " + p.GetNamespace() + "/" + p.GetName()
}

// JudgeKnownCase runs the case's implementation and our engine on the
// known case in dir and returns what does not hold of known.json: a check
// it lists that disagrees otherwise or agrees, or is missing, or that
// Classify does not put in its class; a disagreement it does not list.
func JudgeKnownCase(dir string) ([]string, error) {
	objs, kc, err := ReadCase(dir)
	if err != nil {
		return nil, err
	}
	o := OracleNamed(kc.Impl)
	if o == nil || kc.Class == "" || len(kc.Differences) == 0 {
		return nil, fmt.Errorf("%s: known.json needs a registered impl, a class and differences (impl %q)", dir, kc.Impl)
	}
	checks, err := Judge(o, objs)
	if err != nil {
		return nil, err
	}
	want := map[string]KnownDifference{}
	for _, d := range kc.Differences {
		want[d.key()] = d
	}
	var problems []string
	for _, c := range checks {
		d, listed := want[checkKey(c)]
		delete(want, checkKey(c))
		switch {
		case !listed && !c.Agree():
			problems = append(problems, fmt.Sprintf("a disagreement known.json does not list: %s", c))
		case !listed:
		case c.Theirs != d.Theirs || c.Ours != d.Ours:
			problems = append(problems, fmt.Sprintf("%s: want theirs %q, ours %q", c, d.Theirs, d.Ours))
		default:
			if got, _ := Classify(kc.Impl, c, objs); got != kc.Class {
				problems = append(problems, fmt.Sprintf("%s: class %q, want %q", c, got, kc.Class))
			}
		}
	}
	for _, d := range want {
		problems = append(problems, fmt.Sprintf("no check %s %s %s (known.json: theirs %q, ours %q)", d.Kind, d.Subject, d.Field, d.Theirs, d.Ours))
	}
	sort.Strings(problems)
	return problems, nil
}

// WriteKnownCase shrinks r's disagreement want, of the known class, toward
// that class (ShrinkToward) and writes it as root/<implementation>/diff-<seed>-<n>:
// topology.yaml, policies.yaml, expected.json (our answer on the checks
// that differ, OurExpected), known.json, and a SOURCE.md to complete with
// the evidence.
func WriteKnownCase(o Oracle, r Outcome, want Check, class, root string) (string, error) {
	objs, checks := ShrinkToward(o, r.Case.Objects(), want, class)
	kc := KnownCase{Class: class, Impl: o.Name(), SameSecond: sameSecond(objs)}
	var diff []Check
	for _, c := range checks {
		if !c.Agree() {
			diff = append(diff, c)
			kc.Differences = append(kc.Differences, KnownDifference{Kind: c.Kind, Subject: c.Subject, Field: c.Field,
				Target: nodeString(c.Target), Policy: c.Policy, Theirs: c.Theirs, Ours: c.Ours})
		}
	}
	if len(diff) == 0 {
		return "", fmt.Errorf("seed %d: the shrunk case agrees", r.Seed)
	}
	exp, err := OurExpected(o, objs, diff)
	if err != nil {
		return "", err
	}
	files, err := caseFiles(objs, exp)
	if err != nil {
		return "", err
	}
	k, err := json.MarshalIndent(kc, "", " ")
	if err != nil {
		return "", err
	}
	files[KnownCaseFile] = string(k) + "\n"
	dir, n := freeCaseDir(filepath.Join(root, o.Name()), r.Seed)
	files["SOURCE.md"] = knownSourceMD(o, r.Seed, n, class, diff)
	return dir, writeCaseFiles(dir, files, renamer(r.Seed, n))
}

// sameSecond are the policies of objs (in age order) created in the second
// of the policy before them.
func sameSecond(objs []*unstructured.Unstructured) []string {
	var out []string
	var prev *unstructured.Unstructured
	for _, o := range objs {
		if !isPolicy(o) {
			continue
		}
		if prev != nil && o.GetCreationTimestamp().Time.Equal(prev.GetCreationTimestamp().Time) {
			out = append(out, policyID(o))
		}
		prev = o
	}
	return out
}

// isPolicy says whether o goes to policies.yaml (caseFiles): a policy kind,
// but BackendTLSPolicy, which the cases keep with the topology.
func isPolicy(o *unstructured.Unstructured) bool {
	return strings.HasSuffix(o.GetKind(), "Policy") && o.GetKind() != "BackendTLSPolicy"
}

func knownSourceMD(o Oracle, seed uint64, n int, class string, diff []Check) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# diff-%d-%d: known class `%s`\n\n", seed, n, class)
	fmt.Fprintf(&b, "Found by the differential harness (test/differential, docs/differential.md): seed %d, "+
		"shrunk toward the class (`difftest -impl %s -seed %d -n 1 -known '%s'`). expected.json is OUR answer, "+
		"what the API must give; known.json lists where %s's own code answers otherwise, and "+
		"test/differential's TestKnownCases checks that it still does, exactly so, and that the class explains it.\n\n",
		seed, o.Name(), seed, class, o.Name())
	b.WriteString("Where the two sides differ (theirs, ours):\n\n")
	for _, c := range diff {
		fmt.Fprintf(&b, "- %s\n", c)
	}
	b.WriteString("\n## Evidence\n\n")
	return b.String()
}

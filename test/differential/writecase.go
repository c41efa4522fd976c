package differential

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A CaseWriter turns the implementation's answer on a disagreement into a
// test/upstream expected.json.
type CaseWriter interface {
	Expected(objs []*unstructured.Unstructured, checks []Check) (any, error)
}

// UpstreamDir is where cases are written: test/upstream/<implementation>.
func UpstreamDir(o Oracle) string { return filepath.Join(RepoRoot(), "test", "upstream", o.Name()) }

// WriteCase shrinks the disagreement want of r and writes it as
// test/upstream/<implementation>/diff-<seed>-<n>: topology.yaml,
// policies.yaml (in age order), expected.json (the implementation's
// answer on the checks that disagree) and a SOURCE.md to complete by hand
// with the verdict.
func WriteCase(o Oracle, r Outcome, want Check) (string, error) {
	cw, ok := o.(CaseWriter)
	if !ok {
		return "", fmt.Errorf("%s writes no cases", o.Name())
	}
	objs, checks := Shrink(o, r.Case.Objects(), want)
	var diff []Check
	for _, c := range checks {
		if !c.Agree() {
			diff = append(diff, c)
		}
	}
	exp, err := cw.Expected(objs, diff)
	if err != nil {
		return "", err
	}
	files, err := caseFiles(objs, exp)
	if err != nil {
		return "", err
	}
	dir, n := freeCaseDir(UpstreamDir(o), r.Seed)
	files["SOURCE.md"] = sourceMD(o, r.Seed, n, diff)
	return dir, writeCaseFiles(dir, files, renamer(r.Seed, n))
}

// freeCaseDir is the first dir/diff-<seed>-<n> that does not exist yet, and its n.
func freeCaseDir(dir string, seed uint64) (string, int) {
	for n := 1; ; n++ {
		d := filepath.Join(dir, fmt.Sprintf("diff-%d-%d", seed, n))
		if _, err := os.Stat(d); os.IsNotExist(err) {
			return d, n
		}
	}
}

// writeCaseFiles writes a case's files into dir, renamed (renamer).
func writeCaseFiles(dir string, files map[string]string, rename func(string) string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(rename(content)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// renamer gives the case namespaces and a GatewayClass of its own
// (df<seed>c<n>), so that every case can be applied into one cluster.
func renamer(seed uint64, n int) func(string) string {
	re := regexp.MustCompile(fmt.Sprintf(`\bdf%d\b`, seed))
	return func(s string) string { return re.ReplaceAllString(s, fmt.Sprintf("df%dc%d", seed, n)) }
}

func caseFiles(objs []*unstructured.Unstructured, exp any) (map[string]string, error) {
	var topo, pols []*unstructured.Unstructured
	// Shrinking drops Namespaces (neither side needs them); a cluster does.
	have := map[string]bool{}
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			have[o.GetName()] = true
		}
	}
	for _, o := range objs {
		if ns := o.GetNamespace(); ns != "" && !have[ns] {
			have[ns] = true
			n := &unstructured.Unstructured{Object: map[string]any{}}
			n.SetAPIVersion("v1")
			n.SetKind("Namespace")
			n.SetName(ns)
			topo = append(topo, n)
		}
	}
	for _, o := range objs {
		c := o.DeepCopy()
		unstructured.RemoveNestedField(c.Object, "metadata", "creationTimestamp")
		if isPolicy(c) {
			pols = append(pols, c)
		} else {
			topo = append(topo, c)
		}
	}
	t, err := YAML(topo)
	if err != nil {
		return nil, err
	}
	p, err := YAML(pols)
	if err != nil {
		return nil, err
	}
	e, err := json.MarshalIndent(exp, "", " ")
	if err != nil {
		return nil, err
	}
	return map[string]string{"topology.yaml": string(t), "policies.yaml": string(p), "expected.json": string(e) + "\n"}, nil
}

func sourceMD(o Oracle, seed uint64, n int, diff []Check) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# diff-%d-%d\n\n", seed, n)
	fmt.Fprintf(&b, "Found by the differential harness (test/differential, docs/differential.md): seed %d, "+
		"shrunk to the objects here. expected.json is %s's answer, read off its own code's output "+
		"(`go run ./cmd/difftest -impl %s -seed %d -n 1 -v` in test/differential).\n\n", seed, o.Name(), o.Name(), seed)
	b.WriteString("Where the two sides disagreed (theirs, ours):\n\n")
	for _, c := range diff {
		fmt.Fprintf(&b, "- %s\n", c)
	}
	b.WriteString("\n## Verdict\n\n")
	return b.String()
}

package agree

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/oracles/kuadrant/kuadrantoracle"
)

// casesDir holds the Kuadrant cases of test/upstream (their README gives the format).
const casesDir = "../../../../upstream/kuadrant"

// baseTime is the creation time of the first policy of a case, the next ones one second apart,
// as pkg/compute's TestImplementationScenarios stamps them.
var baseTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TestEngineAgreesWithKuadrantOnUpstreamCases runs kuadrant-operator v1.5.2's own code (the
// oracle) and this project's engine on every Kuadrant case of test/upstream and asserts that the
// effective policy of every path, and every policy's standing, are the same.
func TestEngineAgreesWithKuadrantOnUpstreamCases(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(casesDir, "*", "policies.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dirs = withoutKnown(dirs)
	if len(dirs) < 23 {
		t.Fatalf("found %d Kuadrant cases, want at least 23", len(dirs))
	}
	crds := kuadrantCRDs(t)
	inputs := make([][]byte, len(dirs))
	objects := make([][]*unstructured.Unstructured, len(dirs))
	for i, p := range dirs {
		dir := filepath.Dir(p)
		objects[i] = loadCase(t, dir)
		inputs[i] = encode(t, append(Issuers(objects[i]), objects[i]...))
	}
	bin, err := kuadrantoracle.Binary(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	results, err := kuadrantoracle.Run(context.Background(), bin, inputs...)
	if err != nil {
		t.Fatal(err)
	}
	paths := 0
	for i, p := range dirs {
		dir := filepath.Dir(p)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			outs, err := compute.ComputeAll(append(append([]*unstructured.Unstructured(nil), crds...), objects[i]...), compute.Options{})
			if err != nil {
				t.Fatal(err)
			}
			entries, err := RouteEntries(outs)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range Compare(results[i], entries) {
				t.Errorf("effective policy: %s", d)
			}
			for _, d := range CompareListeners(results[i], outs) {
				t.Errorf("listener: %s", d)
			}
			theirs, ours := OracleVerdicts(results[i]), OurVerdicts(outs, policyKeys(objects[i]))
			for _, p := range objects[i] {
				if directKinds[p.GetKind()] {
					key := p.GetKind() + " " + p.GetNamespace() + "/" + p.GetName()
					theirs[key], ours[key] = DirectStanding(results[i], p, theirs[key], ours[key])
				}
			}
			for _, d := range CompareVerdicts(theirs, ours) {
				t.Errorf("standing: %s", d)
			}
			paths += len(results[i].Paths)
		})
	}
	// The cases of the data-plane kinds have paths; a run that found none compared nothing.
	if paths < 20 {
		t.Errorf("the oracle found %d effective policies over all cases, want at least 20", paths)
	}
}

// withoutKnown drops the cases with a known.json: there Kuadrant and the engine differ on
// purpose (a Kuadrant bug or inconsistency; test/differential's TestKnownCases checks them).
func withoutKnown(policyFiles []string) []string {
	var out []string
	for _, p := range policyFiles {
		if _, err := os.Stat(filepath.Join(filepath.Dir(p), "known.json")); err != nil {
			out = append(out, p)
		}
	}
	return out
}

// loadCase reads a case's topology and policies, the policies stamped one second apart.
func loadCase(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	objs := decodeFile(t, filepath.Join(dir, "topology.yaml"))
	for i, p := range decodeFile(t, filepath.Join(dir, "policies.yaml")) {
		p.SetCreationTimestamp(metav1.NewTime(baseTime.Add(time.Duration(i) * time.Second)))
		objs = append(objs, p)
	}
	return objs
}

func policyKeys(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		if o.GroupVersionKind().Group == "kuadrant.io" {
			out = append(out, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
		}
	}
	return out
}

// kuadrantCRDs runs the cases' crds.sh (kuadrant-operator v1.5.2's CRDs from the Go module
// proxy): the engine recognizes the policy kinds by their CRDs.
func kuadrantCRDs(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(casesDir, "crds.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("crds.sh: %v", err)
	}
	return decode(t, out)
}

func decodeFile(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, b)
}

func decode(t *testing.T, b []byte) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatal(err)
		}
		if m != nil {
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
}

// encode writes objects as a stream of JSON documents, which the oracle reads like YAML.
func encode(t *testing.T, objs []*unstructured.Unstructured) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, o := range objs {
		b, err := json.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

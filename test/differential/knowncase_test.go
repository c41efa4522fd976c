package differential

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// stubOracle answers the checks it is given, whatever the objects.
type stubOracle struct{ checks *[]Check }

func (stubOracle) Name() string               { return "knowncase-test" }
func (stubOracle) Features() gen.Features     { return gen.All }
func (stubOracle) Command() ([]string, error) { return []string{"cat"}, nil }
func (stubOracle) Input(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	return objs, nil
}
func (stubOracle) Ours(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	return objs, nil
}
func (s stubOracle) Compare([]*unstructured.Unstructured, *Ours, []byte) ([]Check, error) {
	return *s.checks, nil
}

const knownTestPolicies = `apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: p1, namespace: ns}
spec: {}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: p2, namespace: ns}
spec: {}
---
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: p3, namespace: ns}
spec: {}
`

// TestJudgeKnownCase: a known case holds only when the checks differ
// exactly where and as known.json says, each of its class; ReadCase stamps
// sameSecond policies in the second before them.
func TestJudgeKnownCase(t *testing.T) {
	var checks []Check
	Register(stubOracle{&checks})
	RegisterKnown(KnownClass{Name: "stub-class", Impl: "knowncase-test", Match: func(c Check, _ []*unstructured.Unstructured) bool {
		return c.Field == "/explained"
	}})
	dir := t.TempDir()
	kc := KnownCase{Class: "stub-class", Impl: "knowncase-test", SameSecond: []string{"BackendTrafficPolicy ns/p2"},
		Differences: []KnownDifference{{Kind: gen.BTP, Subject: "s", Field: "/explained", Theirs: "a", Ours: "b"}}}
	k, _ := json.Marshal(kc)
	for name, content := range map[string]string{"topology.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n",
		"policies.yaml": knownTestPolicies, KnownCaseFile: string(k)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	objs, _, err := ReadCase(dir)
	if err != nil {
		t.Fatal(err)
	}
	ts := map[string]int64{}
	for _, o := range objs {
		ts[o.GetName()] = o.GetCreationTimestamp().Unix()
	}
	if ts["p2"] != ts["p1"] || ts["p3"] != ts["p1"]+1 {
		t.Errorf("stamps %v: want p2 in p1's second, p3 a second later", ts)
	}
	listed := Check{Kind: gen.BTP, Subject: "s", Field: "/explained", Theirs: "a", Ours: "b"}
	agreeing := Check{Kind: gen.BTP, Subject: "s", Field: "/other", Theirs: "x", Ours: "x"}
	for _, tc := range []struct {
		name   string
		checks []Check
		want   string // a problem's text, "" for none
	}{
		{"exactly as listed", []Check{listed, agreeing}, ""},
		{"the implementation fixed", []Check{{Kind: gen.BTP, Subject: "s", Field: "/explained", Theirs: "b", Ours: "b"}, agreeing}, "want theirs"},
		{"ours changed", []Check{{Kind: gen.BTP, Subject: "s", Field: "/explained", Theirs: "a", Ours: "c"}}, "want theirs"},
		{"the check gone", []Check{agreeing}, "no check"},
		{"another disagreement", []Check{listed, {Kind: gen.BTP, Subject: "s", Field: "/other", Theirs: "x"}}, "does not list"},
	} {
		checks = tc.checks
		problems, err := JudgeKnownCase(dir)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(problems, "; ")
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: problems %q, want one with %q", tc.name, got, tc.want)
		}
	}
	// The class predicate drifts: the listed check is no longer of the class.
	kc.Differences[0].Field, listed.Field = "/drifted", "/drifted"
	k, _ = json.Marshal(kc)
	if err := os.WriteFile(filepath.Join(dir, KnownCaseFile), k, 0o644); err != nil {
		t.Fatal(err)
	}
	checks = []Check{listed}
	if problems, err := JudgeKnownCase(dir); err != nil || len(problems) != 1 || !strings.Contains(problems[0], "class") {
		t.Errorf("a check of no class: problems %q (%v), want the class named", problems, err)
	}
}

//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/scenariofile"
	"github.com/effectivepolicy-dev/effectivepolicy/internal/yamldocs"
	v1alpha1 "github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// TestImplementationScenarios runs the scenarios of real implementations (test/scenarios-impl)
// and the cases built from their own test data (test/upstream/<implementation>/<case>) through
// the real API: the implementations' CRDs from their Go modules (each folder's or its parent's
// crds.sh), then every case's topology, then the policies of every case in file order one
// second apart (their creationTimestamps decide same-target ties), and the EffectivePolicies
// read with the generated clientset must match each case's expected.json. kube-apiserver prunes
// and defaults the policies itself. The cases use disjoint namespaces and cluster-scoped names,
// so they run side by side in one cluster.
func TestImplementationScenarios(t *testing.T) {
	cases := implCases(t)
	if len(cases) < 134 {
		t.Fatalf("found %d implementation cases, want at least 134", len(cases))
	}
	applyServerSide(t, implCaseCRDs(t, cases))
	for _, c := range cases {
		applyServerSide(t, c.topology)
	}
	for round := 0; ; round++ {
		var batch []byte
		for _, c := range cases {
			if round < len(c.policies) {
				batch = append(append(batch, c.policies[round]...), "\n---\n"...)
			}
		}
		if batch == nil {
			break
		}
		if round > 0 {
			time.Sleep(1100 * time.Millisecond) // creationTimestamps have one-second resolution
		}
		applyServerSide(t, batch)
	}
	cs := clientset(t, "")
	eps := func(ns string) implEPClient { return cs.EffectivepolicyV1alpha1().EffectivePolicies(ns) }
	var problems []string
	deadline := time.Now().Add(2 * time.Minute)
	for {
		problems = problems[:0]
		for _, c := range cases {
			for _, p := range c.check(eps) {
				problems = append(problems, c.name+": "+p)
			}
		}
		if len(problems) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("%d cases checked through the API", len(cases))
}

type implCase struct {
	name, dir string
	topology  []byte
	policies  [][]byte // one YAML document per policy, in file order
	want      scenariofile.Expected
}

func implCases(t *testing.T) []implCase {
	t.Helper()
	var out []implCase
	for _, root := range []string{"test/scenarios-impl", "test/upstream/envoygateway", "test/upstream/kuadrant", "test/upstream/nginxgatewayfabric", "test/upstream/gatewayapi", "test/upstream/istio", "test/upstream/kgateway"} {
		exps, err := filepath.Glob(filepath.Join(repoRoot, root, "*", "expected.json"))
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(exps)
		for _, exp := range exps {
			dir := filepath.Dir(exp)
			c := implCase{name: filepath.Base(root) + "/" + filepath.Base(dir), dir: dir, topology: readFileT(t, filepath.Join(dir, "topology.yaml"))}
			want, err := scenariofile.Read(exp)
			if err != nil {
				t.Fatal(err)
			}
			c.want = want
			docs, err := yamldocs.Parse(readFileT(t, filepath.Join(dir, "policies.yaml")))
			if err != nil {
				t.Fatalf("%s: %v", dir, err)
			}
			for _, d := range docs {
				b, err := yaml.Marshal(d.Object)
				if err != nil {
					t.Fatal(err)
				}
				c.policies = append(c.policies, b)
			}
			out = append(out, c)
		}
	}
	return out
}

func readFileT(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// implCaseCRDs runs every crds.sh the cases use (the folder's, else its parent's) once. The Go
// module proxy does not serve NGINX Gateway Fabric: without a checkout (NGF_SRC) its kinds get
// CRDs with an open schema, named as the built-in descriptors name them (the cases set every
// field they assert, so no schema default is missed).
func implCaseCRDs(t *testing.T, cases []implCase) []byte {
	t.Helper()
	var out []byte
	done := map[string]bool{}
	for _, c := range cases {
		script := filepath.Join(c.dir, "crds.sh")
		if _, err := os.Stat(script); err != nil {
			script = filepath.Join(filepath.Dir(c.dir), "crds.sh")
		}
		if done[script] {
			continue
		}
		done[script] = true
		if filepath.Base(filepath.Dir(script)) == "nginxgatewayfabric" && os.Getenv("NGF_SRC") == "" {
			out = append(out, openCRDs("gateway.nginx.org")...)
			continue
		}
		cmd := exec.Command("bash", script)
		cmd.Dir = repoRoot
		var errb bytes.Buffer
		cmd.Stderr = &errb
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v\n%s", script, err, errb.String())
		}
		out = append(append(out, b...), "\n---\n"...)
	}
	return out
}

// openCRDs makes a CRD with an open schema for every built-in descriptor of group, serving the
// versions the cases use (NGINX Gateway Fabric v2.6: ObservabilityPolicy and NginxProxy are
// v1alpha2, the others v1alpha1), plus NginxProxy, which a case's topology holds.
func openCRDs(group string) []byte {
	v1alpha2 := map[string]bool{"ObservabilityPolicy": true, "NginxProxy": true}
	kinds := []string{"NginxProxy"}
	for _, d := range compute.BuiltinDescriptors() {
		if d.Group == group {
			kinds = append(kinds, d.Kind)
		}
	}
	var b strings.Builder
	for _, kind := range kinds {
		plural := strings.ToLower(kind)
		switch {
		case strings.HasSuffix(plural, "y"):
			plural = strings.TrimSuffix(plural, "y") + "ies"
		case strings.HasSuffix(plural, "x"):
			plural += "es"
		default:
			plural += "s"
		}
		version := "v1alpha1"
		if v1alpha2[kind] {
			version = "v1alpha2"
		}
		fmt.Fprintf(&b, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[1]s.%[2]s}
spec:
  group: %[2]s
  scope: Namespaced
  names: {kind: %[3]s, plural: %[1]s}
  versions:
  - name: %[4]s
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
`, plural, group, kind, version)
	}
	return []byte(b.String())
}

// applyServerSide applies YAML documents server-side (the implementations' CRDs are too large
// for client-side apply's annotation) and waits for CRDs to be established.
func applyServerSide(t *testing.T, docs []byte) {
	t.Helper()
	out, errOut, err := kubectlRaw(docs, "apply", "--server-side", "--force-conflicts", "--field-manager=e2e-impl", "-f", "-")
	if err != nil {
		t.Fatalf("kubectl apply --server-side: %v\n%s\n%s", err, out, errOut)
	}
	var crds []string
	for _, line := range strings.Split(out, "\n") {
		if name, _, ok := strings.Cut(line, " "); ok && strings.HasPrefix(name, "customresourcedefinition") {
			crds = append(crds, name)
		}
	}
	if len(crds) > 0 {
		waitCondition(t, "Established", crds...)
	}
}

// check compares the served EffectivePolicies with the case's expectations; it returns what
// differs.
func (c implCase) check(eps func(string) implEPClient) []string {
	var problems []string
	cache := map[string]*v1alpha1.EffectivePolicy{}
	get := func(ns, name string) *v1alpha1.EffectivePolicy {
		k := ns + "/" + name
		if ep, ok := cache[k]; ok {
			return ep
		}
		ep, err := eps(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			ep = nil
		}
		cache[k] = ep
		return ep
	}
	for _, a := range c.want.Absent {
		if get(a.Namespace, a.Name) != nil {
			problems = append(problems, fmt.Sprintf("%s/%s should be absent", a.Namespace, a.Name))
		}
	}
	for _, e := range c.want.Effective {
		tp := implTP(get(e.Namespace, e.Name), e.Target.Kind, e.Policy)
		if tp == nil {
			problems = append(problems, fmt.Sprintf("%s/%s: no %s on %s", e.Namespace, e.Name, e.Policy.Kind, e.Target.Kind))
			continue
		}
		var eff *v1alpha1.EffectiveSpec
		for i := range tp.Effective {
			if tp.Effective[i].SectionName == e.SectionName && sameVia(tp.Effective[i].Via, e.Via) {
				eff = &tp.Effective[i]
			}
		}
		if eff == nil {
			problems = append(problems, fmt.Sprintf("%s/%s %s: no effective entry via %v", e.Namespace, e.Name, e.Target.Kind, e.Via))
			continue
		}
		if !jsonEqual(eff.Spec.Raw, e.Spec) {
			problems = append(problems, fmt.Sprintf("%s/%s %s via %v: spec %s, want %s", e.Namespace, e.Name, e.Target.Kind, e.Via, eff.Spec.Raw, e.Spec))
		}
		if e.FieldSources != nil {
			g, _ := json.Marshal(eff.FieldSources)
			w, _ := json.Marshal(e.FieldSources)
			if !jsonEqual(g, w) {
				problems = append(problems, fmt.Sprintf("%s/%s %s via %v: fieldSources %s, want %s", e.Namespace, e.Name, e.Target.Kind, e.Via, g, w))
			}
		}
	}
	for _, s := range c.want.Sources {
		tp := implTP(get(s.Namespace, s.Name), s.Target.Kind, s.Policy)
		outcome := "none"
		for _, src := range tp.sources() {
			name := src.Name
			if src.Namespace != "" {
				name = src.Namespace + "/" + src.Name
			}
			if name == s.Source {
				outcome = string(src.Outcome)
			}
		}
		if outcome != s.Outcome {
			problems = append(problems, fmt.Sprintf("%s/%s %s: source %s outcome %s, want %s", s.Namespace, s.Name, s.Target.Kind, s.Source, outcome, s.Outcome))
		}
	}
	for _, n := range c.want.EffectiveCount {
		got := len(implTP(get(n.Namespace, n.Name), n.Target.Kind, n.Policy).effective())
		if got != n.Count {
			problems = append(problems, fmt.Sprintf("%s/%s %s: %d effective entries of %s, want %d", n.Namespace, n.Name, n.Target.Kind, got, n.Policy.Kind, n.Count))
		}
	}
	return problems
}

type implEPClient interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*v1alpha1.EffectivePolicy, error)
}

type implTargetPolicy struct{ *v1alpha1.TargetPolicy }

func (tp *implTargetPolicy) sources() []v1alpha1.PolicySource {
	if tp == nil {
		return nil
	}
	return tp.Sources
}

func (tp *implTargetPolicy) effective() []v1alpha1.EffectiveSpec {
	if tp == nil {
		return nil
	}
	return tp.Effective
}

func implTP(ep *v1alpha1.EffectivePolicy, targetKind string, k scenariofile.Policy) *implTargetPolicy {
	if ep == nil {
		return nil
	}
	if tp := findTargetPolicy(ep, targetKind, k.Group, k.Kind); tp != nil {
		return &implTargetPolicy{tp}
	}
	return nil
}

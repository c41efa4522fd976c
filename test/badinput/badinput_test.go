// Package badinput feeds a corpus of malformed and hostile inputs (docs/spec.md §6)
// to the computation engine and to the live layer, on top of a sane baseline
// cluster, and checks that nothing else changes. See docs/reliability.md.
package badinput

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/yamldocs"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

const scenarioDir = "../scenarios"

func TestMain(m *testing.M) {
	// The live layer logs every start; keep the test output readable.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	os.Exit(m.Run())
}

// tcase is one corpus file: its header directives and its documents.
type tcase struct {
	file    string
	title   string
	objs    []*unstructured.Unstructured
	expects []expectation
	changed map[compute.Key]bool // keys allowed to differ from the baseline
}

// expectation is one "# expect:" line:
//
//	# expect: invalid <group>/<Kind> <ns>/<name>   the policy is listed, outcome Invalid, non-empty message
//	# expect: absent <group>/<Kind> <ns>/<name>    the policy is listed nowhere (the reason is in the header)
//	# expect: listed <group>/<Kind> <ns>/<name>    the policy is listed with an outcome other than Invalid
//	# expect: unchanged                            only the comparison with the baseline (topology and CRD cases)
type expectation struct {
	what   string
	gk     schema.GroupKind
	policy string
}

// ---- corpus parsing ----

func parseDocs(t *testing.T, name string, data []byte) []*unstructured.Unstructured {
	t.Helper()
	out, err := yamldocs.Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

func readDocs(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return parseDocs(t, path, data)
}

func parseGK(s string) schema.GroupKind {
	i := strings.LastIndex(s, "/")
	if i < 0 {
		return schema.GroupKind{Kind: s}
	}
	return schema.GroupKind{Group: s[:i], Kind: s[i+1:]}
}

func parseKey(s string) compute.Key {
	if i := strings.Index(s, "/"); i >= 0 {
		return compute.Key{Namespace: s[:i], Name: s[i+1:]}
	}
	return compute.Key{Name: s}
}

func loadCase(t *testing.T, path string) *tcase {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := &tcase{file: filepath.Base(path), changed: map[compute.Key]bool{}}
	var gens [][]string
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "# ") {
			if strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "#") {
				break // the header ends at the first document line
			}
			continue
		}
		directive, arg, ok := strings.Cut(strings.TrimPrefix(line, "# "), ":")
		if !ok {
			continue
		}
		arg = strings.TrimSpace(arg)
		f := strings.Fields(arg)
		switch directive {
		case "case":
			c.title = arg
		case "expect":
			if len(f) == 1 && f[0] == "unchanged" {
				c.expects = append(c.expects, expectation{what: "unchanged"})
				continue
			}
			if len(f) != 3 {
				t.Fatalf("%s: bad expect line %q", path, line)
			}
			pol := f[2]
			if strings.HasPrefix(pol, `"`) {
				var err error
				if pol, err = strconv.Unquote(pol); err != nil {
					t.Fatalf("%s: %q: %v", path, line, err)
				}
			}
			c.expects = append(c.expects, expectation{what: f[0], gk: parseGK(f[1]), policy: pol})
		case "changed":
			for _, k := range f {
				c.changed[parseKey(k)] = true
			}
		case "generate":
			gens = append(gens, f)
		}
	}
	if c.title == "" || len(c.expects) == 0 {
		t.Fatalf("%s: the header needs '# case:' and at least one '# expect:' line", path)
	}
	c.objs = parseDocs(t, path, data)
	for _, g := range gens {
		generate(t, c, g)
	}
	return c
}

// generate builds what is too large to keep in a file. Forms:
//
//	# generate: nest <object name> <field> <depth>         spec.<field> = {a: {a: ... 1}}
//	# generate: nestlist <object name> <field> <depth>     spec.<field> = [[[ ... 1]]]
//	# generate: bigstring <object name> <field> <bytes>    spec.<field> = "xxxx..."
//	# generate: bigmap <object name> <field> <keys>        spec.<field> = {k0: 0, k1: 1, ...}
//	# generate: targetrefs <object name> <count> <kind> <name|name%d>
//	# generate: rename <object name> <Go-quoted new name>      (names YAML cannot carry)
func generate(t *testing.T, c *tcase, g []string) {
	t.Helper()
	if len(g) < 3 {
		t.Fatalf("%s: bad generate %v", c.file, g)
	}
	var obj *unstructured.Unstructured
	for _, o := range c.objs {
		if o.GetName() == g[1] {
			obj = o
		}
	}
	if obj == nil {
		t.Fatalf("%s: generate: no object %q", c.file, g[1])
	}
	spec, _ := obj.Object["spec"].(map[string]interface{})
	if spec == nil {
		spec = map[string]interface{}{}
		obj.Object["spec"] = spec
	}
	n := func(s string) int {
		v, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("%s: generate %v: %v", c.file, g, err)
		}
		return v
	}
	switch g[0] {
	case "rename":
		name, err := strconv.Unquote(g[2])
		if err != nil {
			t.Fatalf("%s: generate %v: %v", c.file, g, err)
		}
		obj.SetName(name)
	case "nest":
		var v interface{} = int64(1)
		for i := 0; i < n(g[3]); i++ {
			v = map[string]interface{}{"a": v}
		}
		spec[g[2]] = v
	case "nestlist":
		var v interface{} = int64(1)
		for i := 0; i < n(g[3]); i++ {
			v = []interface{}{v}
		}
		spec[g[2]] = v
	case "bigstring":
		spec[g[2]] = strings.Repeat("x", n(g[3]))
	case "bigmap":
		m := map[string]interface{}{}
		for i := 0; i < n(g[3]); i++ {
			m["k"+strconv.Itoa(i)] = int64(i)
		}
		spec[g[2]] = m
	case "targetrefs":
		refs := make([]interface{}, 0, n(g[2]))
		for i := 0; i < n(g[2]); i++ {
			name := g[4]
			if strings.Contains(name, "%d") {
				name = fmt.Sprintf(name, i)
			}
			refs = append(refs, map[string]interface{}{"group": "gateway.networking.k8s.io", "kind": g[3], "name": name})
		}
		spec["targetRefs"] = refs
	default:
		t.Fatalf("%s: unknown generator %q", c.file, g[0])
	}
}

func corpus(t *testing.T) []*tcase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("corpus", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 50 {
		t.Fatalf("the corpus has %d cases, want at least 50", len(files))
	}
	var cs []*tcase
	for _, f := range files {
		cs = append(cs, loadCase(t, f))
	}
	return cs
}

// TestCorpusEngine feeds each case to a compute.Engine that already holds
// the baseline (incremental path), and to a fresh engine with everything at
// once (ComputeAll order: CRDs first), then deletes the hostile objects
// again. A panic inside Compute is not recovered by the engine and fails the
// test; a panic that Upsert/Delete recovered is seen in
// compute.RecoveredPanics.
func TestCorpusEngine(t *testing.T) {
	baseObjs := baseline(t)
	be, err := compute.NewEngine(compute.Options{})
	if err != nil {
		t.Fatal(err)
	}
	feed(be, baseObjs)
	base := computeAllEngine(t, be)
	if len(base) == 0 {
		t.Fatal("the baseline computes nothing")
	}
	for _, c := range corpus(t) {
		t.Run(strings.TrimSuffix(c.file, ".yaml"), func(t *testing.T) {
			panics := compute.RecoveredPanics()
			defer func() {
				if p := compute.RecoveredPanics(); p != panics {
					t.Errorf("the engine recovered %d panic(s)", p-panics)
				}
			}()

			// Incremental: baseline first, then the hostile objects.
			e, err := compute.NewEngine(compute.Options{})
			if err != nil {
				t.Fatal(err)
			}
			feed(e, baseObjs)
			computeAllEngine(t, e) // warm the memo, as a running server has
			for _, o := range c.objs {
				e.Upsert(o.DeepCopy())
			}
			inc := computeAllEngine(t, e)
			check(t, c, base, inc)

			// From scratch: same result.
			fresh, err := compute.NewEngine(compute.Options{})
			if err != nil {
				t.Fatal(err)
			}
			feed(fresh, append(append([]*unstructured.Unstructured{}, baseObjs...), c.objs...))
			if d := equalOutputs(t, inc, computeAllEngine(t, fresh)); len(d) > 0 {
				t.Errorf("incremental != from scratch: %v", d)
			}

			// Removing the hostile objects restores the baseline exactly.
			for i := len(c.objs) - 1; i >= 0; i-- {
				o := c.objs[i]
				e.Delete(o.GroupVersionKind().GroupKind(), o.GetNamespace(), o.GetName())
			}
			if d := equalOutputs(t, computeAllEngine(t, e), base); len(d) > 0 {
				t.Errorf("after deleting the hostile objects: %v", d)
			}
		})
	}
}

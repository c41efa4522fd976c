// Package badinput feeds a corpus of malformed and hostile inputs (docs/spec.md §6)
// to the computation engine and to the live layer, on top of a sane baseline
// cluster, and checks that nothing else changes. See docs/reliability.md.
package badinput

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/klog/v2"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/yamldocs"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/live"
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

// ---- live layer ----

var plurals = map[string]string{
	"CustomResourceDefinition": "customresourcedefinitions", "Namespace": "namespaces", "Service": "services",
	"GatewayClass": "gatewayclasses", "Gateway": "gateways", "HTTPRoute": "httproutes", "ListenerSet": "listenersets",
	"ReferenceGrant": "referencegrants", "ColorPolicy": "colorpolicies", "GRPCRoute": "grpcroutes",
}

// resourceOf finds the resource of an object: the kind table, else the CRDs
// of the case.
func resourceOf(o *unstructured.Unstructured, objs []*unstructured.Unstructured) (schema.GroupVersionResource, bool) {
	gvk := o.GroupVersionKind()
	if gvk.Version == "" {
		return schema.GroupVersionResource{}, false // an API server would not store it
	}
	if p, ok := plurals[gvk.Kind]; ok {
		return gvk.GroupVersion().WithResource(p), true
	}
	for _, c := range objs {
		if !isCRD(c) {
			continue
		}
		group, _, _ := unstructured.NestedString(c.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(c.Object, "spec", "names", "kind")
		plural, _, _ := unstructured.NestedString(c.Object, "spec", "names", "plural")
		if group == gvk.Group && kind == gvk.Kind && plural != "" {
			return gvk.GroupVersion().WithResource(plural), true
		}
	}
	return schema.GroupVersionResource{}, false
}

// TestCorpusLive runs each case through pkg/live with a fake dynamic
// client: the server path (informers, transforms, engine, stores, cache)
// serves exactly what a fresh engine computes, and starts at all.
func TestCorpusLive(t *testing.T) {
	baseObjs := baseline(t)
	for _, c := range corpus(t) {
		t.Run(strings.TrimSuffix(c.file, ".yaml"), func(t *testing.T) {
			all := append(append([]*unstructured.Unstructured{}, baseObjs...), c.objs...)
			e, err := compute.NewEngine(compute.Options{})
			if err != nil {
				t.Fatal(err)
			}
			feed(e, all)
			want := computeAllEngine(t, e)

			listKinds := map[schema.GroupVersionResource]string{}
			var stored []*unstructured.Unstructured
			for _, o := range all {
				gvr, ok := resourceOf(o, all)
				if !ok || o.GetName() == "" {
					continue // an API server would not store it
				}
				listKinds[gvr] = o.GetKind() + "List"
				stored = append(stored, o)
			}
			for _, gvr := range e.PolicyResources() {
				if _, ok := listKinds[gvr]; !ok {
					listKinds[gvr] = "UnstructuredList"
				}
			}
			for _, k := range []string{"GatewayClass", "Gateway", "HTTPRoute", "ListenerSet", "GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute"} {
				listKinds[schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: strings.ToLower(k) + "s"}] = k + "List"
			}
			listKinds[schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1beta1", Resource: "referencegrants"}] = "ReferenceGrantList"
			for _, r := range []string{"customresourcedefinitions", "namespaces", "services"} {
				g := ""
				v := "v1"
				if r == "customresourcedefinitions" {
					g = "apiextensions.k8s.io"
				}
				kind := map[string]string{"customresourcedefinitions": "CustomResourceDefinitionList", "namespaces": "NamespaceList", "services": "ServiceList"}[r]
				listKinds[schema.GroupVersionResource{Group: g, Version: v, Resource: r}] = kind
			}
			client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds)
			for _, o := range stored {
				gvr, _ := resourceOf(o, all)
				if err := client.Tracker().Create(gvr, o.DeepCopy(), o.GetNamespace()); err != nil {
					t.Logf("not stored (an API server would refuse it too): %s %s: %v", o.GetKind(), o.GetName(), err)
				}
			}
			o := live.NewOptions()
			o.CacheDir = t.TempDir()
			o.RecomputeDebounce = time.Millisecond
			l, err := o.NewForClient(client)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); _ = l.Run(ctx) }()
			defer cancel()
			deadline := time.Now().Add(30 * time.Second)
			for !l.Ready() {
				if time.Now().After(deadline) {
					t.Fatal("the live layer never became ready")
				}
				time.Sleep(5 * time.Millisecond)
			}
			var d []string
			for {
				got := served(t, l)
				if d = equalOutputs(t, got, want); len(d) == 0 || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if len(d) > 0 {
				t.Errorf("served != engine: %v", d)
			}

			// The bbolt cache holds what was served: a restarted server
			// restores it before reading the cluster.
			cancel()
			<-done
			l2, err := o.NewForClient(client)
			if err != nil {
				t.Fatal(err)
			}
			if err := l2.CacheError(); err != nil {
				t.Errorf("cache: %v", err)
			}
			if d := equalOutputs(t, served(t, l2), want); len(d) > 0 {
				t.Errorf("restored from the cache != engine: %v", d)
			}
		})
	}
}

func served(t *testing.T, l *live.Live) map[compute.Key][]v1alpha1.Target {
	t.Helper()
	out := map[compute.Key][]v1alpha1.Target{}
	for _, b := range []*live.Backend{l.EffectivePolicies(), l.ClusterEffectivePolicies()} {
		objs, _, err := b.List(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			m, err := meta.Accessor(o)
			if err != nil {
				t.Fatal(err)
			}
			targets, err := encoded.TargetsOf(o) // the live layer serves encoded.Objects
			if err != nil {
				t.Fatal(err)
			}
			out[compute.Key{Namespace: m.GetNamespace(), Name: m.GetName()}] = targets
		}
	}
	return out
}

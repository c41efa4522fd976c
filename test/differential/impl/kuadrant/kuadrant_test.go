package kuadrant

import (
	"encoding/json"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/oracles/kuadrant/kuadrantoracle"
)

// TestKuadrantAttached: which Kuadrant paths are compared (Gateway API
// attachment: listener protocol, allowedRoutes namespaces, hostnames).
func TestKuadrantAttached(t *testing.T) {
	gw := func(listener map[string]any) *unstructured.Unstructured {
		listener["name"] = "l1"
		return &unstructured.Unstructured{Object: map[string]any{"kind": "Gateway",
			"metadata": map[string]any{"namespace": "a", "name": "gw"},
			"spec":     map[string]any{"listeners": []any{listener}}}}
	}
	route := func(ns string, hosts ...any) *unstructured.Unstructured {
		spec := map[string]any{}
		if len(hosts) > 0 {
			spec["hostnames"] = hosts
		}
		return &unstructured.Unstructured{Object: map[string]any{"kind": "HTTPRoute",
			"metadata": map[string]any{"namespace": ns, "name": "r"}, "spec": spec}}
	}
	all := map[string]any{"namespaces": map[string]any{"from": "All"}}
	same := map[string]any{"namespaces": map[string]any{"from": "Same"}}
	tests := []struct {
		name     string
		listener map[string]any
		route    *unstructured.Unstructured
		want     bool
	}{
		{"http, no hostnames", map[string]any{"protocol": "HTTP", "allowedRoutes": all}, route("b"), true},
		{"tcp listener", map[string]any{"protocol": "TCP", "allowedRoutes": all}, route("a"), false},
		{"same namespace only, other namespace", map[string]any{"protocol": "HTTP", "allowedRoutes": same}, route("b"), false},
		{"same namespace only, same namespace", map[string]any{"protocol": "HTTP", "allowedRoutes": same}, route("a"), true},
		{"hostnames differ", map[string]any{"protocol": "HTTP", "hostname": "b.example.com"}, route("a", "a.example.com"), false},
		{"listener wildcard", map[string]any{"protocol": "HTTP", "hostname": "*.example.com"}, route("a", "a.example.com"), true},
		{"wildcard never takes the bare domain", map[string]any{"protocol": "HTTP", "hostname": "*.example.com"}, route("a", "example.com"), false},
		{"route wildcard", map[string]any{"protocol": "HTTP", "hostname": "a.example.com"}, route("a", "*.example.com"), true},
		{"one of the route's hostnames", map[string]any{"protocol": "HTTP", "hostname": "b.example.com"}, route("a", "c.other.org", "b.example.com"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := []*unstructured.Unstructured{gw(tt.listener), tt.route}
			path := []kuadrantoracle.Node{{Kind: "Gateway", Namespace: "a", Name: "gw"},
				{Kind: "Listener", Namespace: "a", Name: "gw", SectionName: "l1"},
				{Kind: "HTTPRoute", Namespace: tt.route.GetNamespace(), Name: "r"}}
			if got := kuadrantAttached(objs, path); got != tt.want {
				t.Errorf("attached = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestKuadrantGenerator: the Kuadrant policies are ones Kuadrant's CRDs
// admit (nothing pruned; targetRef kinds and the mutually exclusive
// defaults, overrides and implicit defaults as their CEL rules say; a
// section that exists), and turning Kuadrant on leaves Envoy Gateway's
// generation alone.
func TestKuadrantGenerator(t *testing.T) {
	s, err := kuadrantCRDs()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for seed := uint64(1); seed <= 300; seed++ {
		c := gen.Generate(seed, gen.Features{Kuadrant: true})
		for _, p := range c.Policies {
			kinds[p.GetKind()]++
			if directKinds[p.GetKind()] {
				checkDirectPolicy(t, seed, s, c, p)
				continue
			}
			checkKuadrantPolicy(t, seed, s, c, p)
		}
		eg, _ := differential.YAML(gen.Generate(seed, gen.Features{}).Objects())
		if strings.Contains(string(eg), gen.KuadrantGroup) {
			t.Fatalf("seed %d: Kuadrant policies without Features.Kuadrant", seed)
		}
	}
	for _, k := range []string{gen.AP, gen.RLP, gen.TRLP, gen.DNS, gen.TLS} {
		if kinds[k] < 50 {
			t.Errorf("%d %s in 300 seeds, want at least 50", kinds[k], k)
		}
	}
}

func checkKuadrantPolicy(t *testing.T, seed uint64, s *differential.Schemas, c *gen.Case, p *unstructured.Unstructured) {
	t.Helper()
	checkNothingPruned(t, seed, s, p)
	spec, _, _ := unstructured.NestedMap(p.Object, "spec")
	blocks := 0
	for _, k := range []string{"defaults", "overrides", "limits", "rules"} {
		if _, ok := spec[k]; ok {
			blocks++
		}
	}
	if blocks != 1 {
		t.Errorf("seed %d: %s %s: %d of defaults, overrides, implicit defaults", seed, p.GetKind(), p.GetName(), blocks)
	}
	ref, _, _ := unstructured.NestedStringMap(p.Object, "spec", "targetRef")
	allowed := ref["kind"] == "Gateway" || ref["kind"] == "HTTPRoute" || ref["kind"] == "GRPCRoute" && p.GetKind() != gen.TRLP
	target := findObject(c.Topology, ref["kind"], p.GetNamespace(), ref["name"])
	if !allowed || ref["group"] != "gateway.networking.k8s.io" || target == nil {
		t.Errorf("seed %d: %s %s names %v", seed, p.GetKind(), p.GetName(), ref)
	}
	if sec := ref["sectionName"]; sec != "" && target != nil && !strings.Contains(mustYAML(t, target), "name: "+sec+"\n") {
		t.Errorf("seed %d: %s %s names section %s its target lacks", seed, p.GetKind(), p.GetName(), sec)
	}
}

func mustYAML(t *testing.T, o *unstructured.Unstructured) string {
	t.Helper()
	b, err := differential.YAML([]*unstructured.Unstructured{o})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// kuadrantClassSeeds are seeds whose disagreements are all of a known
// class (docs/differential.md); DIFF_KUADRANT_SEEDS (comma-separated) adds
// more, to classify a long run's.
var kuadrantClassSeeds = []uint64{6, 32, 339}

// kuadrantFixedSeeds disagreed in a class since fixed, and agree now: 77, 125 and 130 a policy
// overridden on every rule of a route, which the engine reported in effect in the whole-route
// context until the Kuadrant profile gave a route every rule of which bears a policy of the
// kind no whole-route entry (semantics.RuleContexts; test/upstream/kuadrant/rlp-every-rule-named).
var kuadrantFixedSeeds = []uint64{77, 125, 130}

// TestKuadrantFixedSeedsAgree: on the seeds of a fixed class Kuadrant and the engine agree
// on every check.
func TestKuadrantFixedSeedsAgree(t *testing.T) {
	for _, s := range kuadrantFixedSeeds {
		r, err := differential.RunSeed(kuadrant{}, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range r.Disagreements() {
			t.Errorf("seed %d: %s", s, c)
		}
	}
}

// TestKuadrantKnownClasses: on these seeds Kuadrant and the engine still
// disagree, and only in a known class. When the engine changes so that
// one agrees, docs/differential.md's account of the class must change too.
func TestKuadrantKnownClasses(t *testing.T) {
	seeds := append([]uint64(nil), kuadrantClassSeeds...)
	for _, f := range strings.FieldsFunc(os.Getenv("DIFF_KUADRANT_SEEDS"), func(r rune) bool { return r == ',' || r == ' ' }) {
		s, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			t.Fatalf("DIFF_KUADRANT_SEEDS: %v", err)
		}
		seeds = append(seeds, s)
	}
	classes := map[string]int{}
	for _, s := range seeds {
		r, err := differential.RunSeed(kuadrant{}, s)
		if err != nil {
			t.Fatal(err)
		}
		d := r.Disagreements()
		if len(d) == 0 {
			t.Errorf("seed %d: no disagreement any more", s)
		}
		for _, c := range d {
			class, ok := differential.Classify("kuadrant", c, r.Case.Objects())
			if !ok {
				t.Errorf("seed %d: %s is of no known class", s, c)
			}
			classes[class]++
		}
	}
	for _, k := range []string{SameSecondTie, IssuerKindUnset} {
		if classes[k] == 0 {
			t.Errorf("no disagreement of class %q on seeds %v any more", k, seeds)
		}
	}
	keys := make([]string, 0, len(classes))
	for k := range classes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%q: %d", k, classes[k])
	}
}

// checkNothingPruned: p's CRD admits every field of it (kube-apiserver
// would prune none), so that both sides read the object as generated.
func checkNothingPruned(t *testing.T, seed uint64, s *differential.Schemas, p *unstructured.Unstructured) {
	t.Helper()
	before, _ := json.Marshal(p.Object)
	q := p.DeepCopy()
	st := s.Schema(p.GetAPIVersion(), p.GetKind())
	if st == nil {
		t.Fatalf("seed %d: no CRD for %s %s", seed, p.GetAPIVersion(), p.GetKind())
	}
	pruning.Prune(q.Object, st, true)
	if after, _ := json.Marshal(q.Object); string(after) != string(before) {
		t.Errorf("seed %d: %s %s has fields its CRD prunes:\n%s\n%s", seed, p.GetKind(), p.GetName(), before, after)
	}
}

package kuadrant

import (
	"crypto/sha256"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/oracles/kuadrant/kuadrantoracle"
)

// checkDirectPolicy: a DNSPolicy or TLSPolicy its CRD admits (nothing
// pruned, a Gateway target of the gateway.networking.k8s.io group), naming
// a Gateway of its namespace and one of its listeners, except the missing
// Gateway and listener the generator names on purpose.
func checkDirectPolicy(t *testing.T, seed uint64, s *differential.Schemas, c *gen.Case, p *unstructured.Unstructured) {
	t.Helper()
	checkNothingPruned(t, seed, s, p)
	ref, _, _ := unstructured.NestedStringMap(p.Object, "spec", "targetRef")
	if ref["kind"] != "Gateway" || ref["group"] != "gateway.networking.k8s.io" {
		t.Errorf("seed %d: %s %s names %v", seed, p.GetKind(), p.GetName(), ref)
	}
	if ref["name"] == "gw-missing" {
		return
	}
	target := findObject(c.Topology, "Gateway", p.GetNamespace(), ref["name"])
	if target == nil {
		t.Errorf("seed %d: %s %s names a Gateway %s/%s that is not generated", seed, p.GetKind(), p.GetName(), p.GetNamespace(), ref["name"])
		return
	}
	if sec := ref["sectionName"]; sec != "" && sec != "missing" && findListener(c.Topology, nodeOfGateway(target), sec) == nil {
		t.Errorf("seed %d: %s %s names section %s its target lacks", seed, p.GetKind(), p.GetName(), sec)
	}
}

// oldObjectsDigest is the SHA-256 of the YAML of seeds 1–300's objects as
// the generator wrote them before it generated DNSPolicies and TLSPolicies
// (every object but those and the Gateway gw-tls).
const oldObjectsDigest = "cc83609c1f5e31d0150db2436c6d58e422fc0795370fab3130fa0b052ee538f1"

// TestKuadrantDirectAddsOnly: generating DNSPolicies and TLSPolicies (and
// the Gateway gw-tls) left every other object of every seed as it was, so
// that the seeds judged before still judge the same objects.
func TestKuadrantDirectAddsOnly(t *testing.T) {
	h := sha256.New()
	added := map[string]int{}
	for seed := uint64(1); seed <= 300; seed++ {
		var old []*unstructured.Unstructured
		for _, o := range gen.Generate(seed, gen.Features{Kuadrant: true}).Objects() {
			if directKinds[o.GetKind()] || o.GetKind() == "Gateway" && o.GetName() == "gw-tls" {
				added[o.GetKind()]++
				continue
			}
			old = append(old, o)
		}
		y, err := differential.YAML(old)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(y)
	}
	if got := fmt.Sprintf("%x", h.Sum(nil)); got != oldObjectsDigest {
		t.Errorf("the objects of the kinds generated before DNSPolicy and TLSPolicy changed: digest %s, want %s", got, oldObjectsDigest)
	}
	for _, k := range []string{gen.DNS, gen.TLS, "Gateway"} {
		if added[k] < 50 {
			t.Errorf("%d %s added in 300 seeds, want at least 50", added[k], k)
		}
	}
}

func nodeOfGateway(g *unstructured.Unstructured) kuadrantoracle.Node {
	return kuadrantoracle.Node{Kind: "Gateway", Namespace: g.GetNamespace(), Name: g.GetName()}
}

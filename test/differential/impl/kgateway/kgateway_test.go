package kgateway

import (
	"bytes"
	"path"
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// TestGenerateKgatewayCoversStructures: over a few hundred seeds the
// kgateway generator writes every structure it promises, and the same seed
// the same objects.
func TestGenerateKgatewayCoversStructures(t *testing.T) {
	f := differential.OracleNamed("kgateway").Features()
	want := map[string][]byte{
		"listener sections":  []byte("sectionName: l"),
		"rule sections":      []byte("sectionName: rule"),
		"unnamed rules":      []byte("- backendRefs:"),
		"delegation":         []byte("kind: HTTPRoute\n      name: r"),
		"policy weight":      []byte(gen.WeightAnnotation),
		"inherited priority": []byte(gen.PriorityAnnotation),
		"other namespace":    []byte("namespace: df"),
		"controller":         []byte("controllerName: " + gen.KgatewayController),
		"second target":      []byte("  - group: gateway.networking.k8s.io\n    kind: HTTPRoute\n    name: r1\n  - group"),
		gen.HLP:              []byte("kind: " + gen.HLP),
		gen.LP:               []byte("kind: " + gen.LP),
		gen.BCP:              []byte("kind: " + gen.BCP),
		"LP default":         []byte("  default:\n"),
		"LP perPort":         []byte("  perPort:\n"),
		"Service target":     []byte("  - group: \"\"\n    kind: Service\n    name: backend"),
		"second Gateway":     []byte("    kind: Gateway\n    name: gw1\n  - group: gateway.networking.k8s.io\n    kind: Gateway\n    name: gw2"),
	}
	for _, fs := range [][]gen.Field{gen.KgatewayHLPFields, gen.KgatewayLPFields, gen.KgatewayBCPFields} {
		for _, u := range fs {
			want[u.Pointer] = []byte(path.Base(u.Pointer) + ":")
		}
	}
	for _, u := range gen.KgatewayUnits {
		want[u.Pointer] = []byte(path.Base(u.Pointer) + ":")
	}
	got := map[string]int{}
	for s := uint64(0); s < 300; s++ {
		y, err := differential.YAML(gen.Generate(s, f).Objects())
		if err != nil {
			t.Fatal(err)
		}
		again, _ := differential.YAML(gen.Generate(s, f).Objects())
		if !bytes.Equal(y, again) {
			t.Fatalf("seed %d: two runs differ", s)
		}
		if bytes.Contains(y, []byte("kind: TCPRoute")) || bytes.Contains(y, []byte(gen.BTP)) {
			t.Fatalf("seed %d: an Envoy Gateway structure in a kgateway case", s)
		}
		for name, b := range want {
			got[name] += bytes.Count(y, b)
		}
	}
	for name := range want {
		if got[name] == 0 {
			t.Errorf("no %s in 300 seeds", name)
		}
	}
}

package differential

import (
	"bytes"
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// TestGenerateDeterministic: a seed always gives the same objects, and
// different seeds different ones.
func TestGenerateDeterministic(t *testing.T) {
	for _, s := range []uint64{1, 2, 77, 1 << 40} {
		a, err := YAML(gen.Generate(s, gen.All).Objects())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := YAML(gen.Generate(s, gen.All).Objects())
		c, _ := YAML(gen.Generate(s+1, gen.All).Objects())
		if !bytes.Equal(a, b) {
			t.Errorf("seed %d: two runs differ", s)
		}
		if bytes.Equal(a, c) {
			t.Errorf("seeds %d and %d give the same objects", s, s+1)
		}
	}
}

// TestGenerateCoversStructures: over a few hundred seeds the generator
// writes every structure it promises.
func TestGenerateCoversStructures(t *testing.T) {
	kinds := map[string]int{}
	var sections, merges, unnamed, grants int
	for s := uint64(0); s < 300; s++ {
		y, _ := YAML(gen.Generate(s, gen.All).Objects())
		for _, o := range gen.Generate(s, gen.All).Objects() {
			kinds[o.GetKind()]++
		}
		sections += bytes.Count(y, []byte("sectionName:"))
		merges += bytes.Count(y, []byte("mergeType:"))
		unnamed += bytes.Count(y, []byte("- backendRefs:"))
		grants += bytes.Count(y, []byte("kind: ReferenceGrant"))
	}
	for _, k := range []string{"GatewayClass", "Gateway", "ListenerSet", "HTTPRoute", "GRPCRoute", "TCPRoute",
		"UDPRoute", "TLSRoute", "ReferenceGrant", gen.BTP, gen.SP, gen.CTP, gen.EEP} {
		if kinds[k] == 0 {
			t.Errorf("no %s in 300 seeds", k)
		}
	}
	if sections == 0 || merges == 0 || unnamed == 0 || grants == 0 {
		t.Errorf("sections %d, mergeTypes %d, rules %d, grants %d: want some of each", sections, merges, unnamed, grants)
	}
}

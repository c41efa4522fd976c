package kgateway

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// trafficPolicyCasesHash is the hash of the objects the generator wrote for
// seeds 0-299 before it knew kinds other than TrafficPolicy (computed with
// that generator): thousands of seeds have been judged with those objects,
// so a seed must keep them, whatever the generator adds after them.
const trafficPolicyCasesHash = "8092879e08348000915d30d662d5682fa20cbd51f6d984b0af617b27d5ca6d1d"

// TestKgatewaySeedsKeepTheirObjects: the generator's objects but the
// HTTPListenerPolicies, ListenerPolicies and BackendConfigPolicies (drawn
// from a random source of their own, listed after every other) are those it
// wrote before it generated those kinds.
func TestKgatewaySeedsKeepTheirObjects(t *testing.T) {
	f := differential.OracleNamed("kgateway").Features()
	later := map[string]bool{"HTTPListenerPolicy": true, "ListenerPolicy": true, "BackendConfigPolicy": true}
	h := sha256.New()
	for s := uint64(0); s < 300; s++ {
		var kept []*unstructured.Unstructured
		for _, o := range gen.Generate(s, f).Objects() {
			if !later[o.GetKind()] {
				kept = append(kept, o)
			}
		}
		y, err := differential.YAML(kept)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(y)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != trafficPolicyCasesHash {
		t.Errorf("the objects of seeds 0-299 changed: hash %s, want %s", got, trafficPolicyCasesHash)
	}
}

package differential

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// TestSeedsKeepTheirObjects: thousands of Envoy Gateway seeds were judged
// before EnvoyPatchPolicies joined the generator; a seed still gives the
// same other objects (the digests of `difftest -impl envoygateway -dump`
// before they joined), so those judgements still hold.
func TestSeedsKeepTheirObjects(t *testing.T) {
	for _, tc := range []struct {
		seed   uint64
		digest string
	}{
		{5, "a7661303cefd67d5e867e86bbc6c04d6d158f60947cfef6fb72aa740011d755a"},
		{104, "1172992c5d9ca21abb379f7480f13bc4436525ae04201f88a91e879470043a46"},
		{6732, "252d07d84261acf9da09bb960068be288a71bfee4ce1cdbbfa165c66535bd310"},
	} {
		var objs []*unstructured.Unstructured
		for _, o := range gen.Generate(tc.seed, gen.Features{}).Objects() {
			if o.GetKind() != gen.EPP {
				objs = append(objs, o)
			}
		}
		b, err := YAML(objs)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != tc.digest {
			t.Errorf("seed %d: objects digest %s, want %s: the generator changed what a judged seed means", tc.seed, got, tc.digest)
		}
	}
}

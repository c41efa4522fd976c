package differential

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// TestSeedsKeepTheirObjects: thousands of Envoy Gateway and Istio seeds
// were judged before EnvoyPatchPolicies and TrafficExtensions joined the
// generator; a seed still gives the same other objects (the digests of
// `difftest -impl <name> -dump` before they joined), so those judgements
// still hold.
func TestSeedsKeepTheirObjects(t *testing.T) {
	istio := gen.Features{Istio: true}
	for _, tc := range []struct {
		seed     uint64
		features gen.Features
		added    string
		digest   string
	}{
		{1, istio, gen.IstioTrafficExtension, "28636f77e97e7f882b3181dc7f4c4137a5ef962c7a038c9d7c99a0b45fc558a5"},
		{244, istio, gen.IstioTrafficExtension, "23a7d17bddd6dd8d560ee1f0869017a46e5601e3f0081ee8a3ff73d8e6ba8ad6"},
		{5, gen.Features{}, gen.EPP, "a7661303cefd67d5e867e86bbc6c04d6d158f60947cfef6fb72aa740011d755a"},
		{104, gen.Features{}, gen.EPP, "1172992c5d9ca21abb379f7480f13bc4436525ae04201f88a91e879470043a46"},
		{6732, gen.Features{}, gen.EPP, "252d07d84261acf9da09bb960068be288a71bfee4ce1cdbbfa165c66535bd310"},
	} {
		var objs []*unstructured.Unstructured
		for _, o := range gen.Generate(tc.seed, tc.features).Objects() {
			if o.GetKind() != tc.added {
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

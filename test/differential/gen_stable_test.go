package differential

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// TestSeedsKeepTheirObjects: thousands of Envoy Gateway and Istio seeds
// were judged before EnvoyPatchPolicies, TrafficExtensions and EnvoyFilters
// joined the generator; a seed still gives the same other objects (the
// digests of `difftest -impl <name> -dump` before they joined), so those
// judgements still hold.
func TestSeedsKeepTheirObjects(t *testing.T) {
	istio := gen.Features{Istio: true}
	// Before TrafficExtensions, then before EnvoyFilters (which came after them).
	beforeTE := []string{gen.IstioTrafficExtension, gen.IstioEnvoyFilter}
	beforeEF := []string{gen.IstioEnvoyFilter}
	for _, tc := range []struct {
		seed     uint64
		features gen.Features
		added    []string
		digest   string
	}{
		{1, istio, beforeTE, "28636f77e97e7f882b3181dc7f4c4137a5ef962c7a038c9d7c99a0b45fc558a5"},
		{244, istio, beforeTE, "23a7d17bddd6dd8d560ee1f0869017a46e5601e3f0081ee8a3ff73d8e6ba8ad6"},
		{1, istio, beforeEF, "893b2d6c31a86e5d1971c27d5600d86b42418e0a3e70aa010c8df017ab39b7a7"},
		{7, istio, beforeEF, "0a486234453cc0c0810cfbe0d4ca16a036ade4ce090c2cc0067e0c0547776c21"},
		{33, istio, beforeEF, "3dc11f8968e464ac7dfc23505657e60004aaf4d0e96960683513e3845cfa5207"},
		{244, istio, beforeEF, "1eed1b438fee3f45c2861266744a99b409e8273e2f5774107c9172c360208e4b"},
		{5, gen.Features{}, []string{gen.EPP}, "a7661303cefd67d5e867e86bbc6c04d6d158f60947cfef6fb72aa740011d755a"},
		{104, gen.Features{}, []string{gen.EPP}, "1172992c5d9ca21abb379f7480f13bc4436525ae04201f88a91e879470043a46"},
		{6732, gen.Features{}, []string{gen.EPP}, "252d07d84261acf9da09bb960068be288a71bfee4ce1cdbbfa165c66535bd310"},
	} {
		var objs []*unstructured.Unstructured
		for _, o := range gen.Generate(tc.seed, tc.features).Objects() {
			if !slices.Contains(tc.added, o.GetKind()) {
				objs = append(objs, o)
			}
		}
		b, err := YAML(objs)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != tc.digest {
			t.Errorf("seed %d without %v: objects digest %s, want %s: the generator changed what a judged seed means", tc.seed, tc.added, got, tc.digest)
		}
	}
}

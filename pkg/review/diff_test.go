package review

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// TestChangedOnly: a review's before and after keep only the targets, and
// in them the policy kinds, that change.
func TestChangedOnly(t *testing.T) {
	tp := func(kind, spec string) v1alpha1.TargetPolicy {
		return v1alpha1.TargetPolicy{Group: "example.com", Kind: kind, Class: v1alpha1.ClassInherited,
			Effective: []v1alpha1.EffectiveSpec{{Spec: runtime.RawExtension{Raw: []byte(spec)}}}}
	}
	target := func(kind string, ps ...v1alpha1.TargetPolicy) v1alpha1.Target {
		return v1alpha1.Target{Group: "gateway.networking.k8s.io", Kind: kind, Name: "baker", Policies: ps}
	}
	before := []v1alpha1.Target{
		target("HTTPRoute", tp("RetryPolicy", `{"a":1}`), tp("TimeoutPolicy", `{"t":1}`), tp("GonePolicy", `{}`)),
		target("Gateway", tp("RetryPolicy", `{"a":1}`)),
		target("TLSRoute", tp("RetryPolicy", `{"a":1}`)),
	}
	after := []v1alpha1.Target{
		target("HTTPRoute", tp("RetryPolicy", `{"a":2}`), tp("TimeoutPolicy", `{"t":1}`), tp("NewPolicy", `{}`)),
		target("Gateway", tp("RetryPolicy", `{"a":1}`)),
		target("GRPCRoute", tp("RetryPolicy", `{"a":1}`)),
	}
	b, a := changedOnly(before, after)
	describe := func(ts []v1alpha1.Target) []string {
		var out []string
		for _, t := range ts {
			for _, p := range t.Policies {
				out = append(out, t.Kind+"/"+p.Kind)
			}
		}
		return out
	}
	if got, want := describe(b), []string{"HTTPRoute/RetryPolicy", "HTTPRoute/GonePolicy", "TLSRoute/RetryPolicy"}; !equal(got, want) {
		t.Errorf("before %v, want %v", got, want)
	}
	if got, want := describe(a), []string{"HTTPRoute/RetryPolicy", "HTTPRoute/NewPolicy", "GRPCRoute/RetryPolicy"}; !equal(got, want) {
		t.Errorf("after %v, want %v", got, want)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

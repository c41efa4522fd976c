package policies

import (
	"strings"
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// TestValidateUntargeted checks the descriptor fields of kinds whose policies may name no
// target (Istio's namespace-wide policies) and whose selectors pick workloads.
func TestValidateUntargeted(t *testing.T) {
	base := func(f func(d *Descriptor)) *Descriptor {
		d := &Descriptor{Group: "example.com", Kind: "P", Class: v1alpha1.ClassInherited}
		f(d)
		return d
	}
	cases := []struct {
		name string
		d    *Descriptor
		want string // substring of the error, "" for none
	}{
		{"no target field at all", base(func(*Descriptor) {}), "at least one of"},
		{"namespace scope alone", base(func(d *Descriptor) { d.UntargetedScope = "Namespace" }), ""},
		{"workload selector alone", base(func(d *Descriptor) { d.WorkloadSelectors = []string{"spec.selector"} }), ""},
		{"unknown scope", base(func(d *Descriptor) { d.UntargetedScope = "Cluster" }), "untargetedScope must be"},
		{"selector path outside spec", base(func(d *Descriptor) { d.WorkloadSelectors = []string{"selector"} }), "below spec"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Validate(c.d)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

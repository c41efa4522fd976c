package kuadrant

import (
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
)

func TestDescriptors(t *testing.T) {
	want := map[string]v1alpha1.PolicyClass{
		"RateLimitPolicy":      v1alpha1.ClassInherited,
		"AuthPolicy":           v1alpha1.ClassInherited,
		"TokenRateLimitPolicy": v1alpha1.ClassInherited,
		"DNSPolicy":            v1alpha1.ClassDirect,
		"TLSPolicy":            v1alpha1.ClassDirect,
	}
	ds := (Profile{}).Descriptors()
	if len(ds) != len(want) {
		t.Fatalf("%d descriptors, want %d", len(ds), len(want))
	}
	for _, d := range ds {
		class, ok := want[d.Kind]
		switch {
		case !ok:
			t.Errorf("unexpected kind %s", d.Kind)
		case d.Group != "kuadrant.io":
			t.Errorf("%s: group %q", d.Kind, d.Group)
		case d.Class != class:
			t.Errorf("%s: class %s, want %s", d.Kind, d.Class, class)
		case d.Semantics != semantics.Kuadrant:
			t.Errorf("%s: semantics %q, want %q", d.Kind, d.Semantics, semantics.Kuadrant)
		case class == v1alpha1.ClassDirect && (len(d.Defaults) > 0 || len(d.Overrides) > 0):
			t.Errorf("%s: a Direct kind has no defaults or overrides", d.Kind)
		}
	}
}

func TestDirectKindsHaveNoMergeRule(t *testing.T) {
	for _, kind := range []string{"DNSPolicy", "TLSPolicy"} {
		if r := (Profile{}).Rule(kind); r != "" {
			t.Errorf("Rule(%s) = %q: the GEP outcome (None) describes it", kind, r)
		}
	}
}

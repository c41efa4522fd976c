package ui

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// TestOutcomeClass: a node takes the color of the outcome a reader must
// see first, and says every outcome in words.
func TestOutcomeClass(t *testing.T) {
	const (
		e = v1alpha1.OutcomeEnforced
		p = v1alpha1.OutcomePartiallyEnforced
		o = v1alpha1.OutcomeOverridden
		c = v1alpha1.OutcomeConflicted
		i = v1alpha1.OutcomeInvalid
	)
	cases := []struct {
		outcomes []v1alpha1.Outcome
		class    string
		line     string
	}{
		{nil, "none", "0 policies"},
		{[]v1alpha1.Outcome{e}, "enforced", "1 policy · 1 Enforced"},
		{[]v1alpha1.Outcome{e, o}, "lost", "2 policies · 1 Enforced · 1 Overridden"},
		{[]v1alpha1.Outcome{o, p, e}, "partial", "3 policies · 1 Enforced · 1 PartiallyEnforced · 1 Overridden"},
		{[]v1alpha1.Outcome{p, c}, "conflict", "2 policies · 1 PartiallyEnforced · 1 Conflicted"},
		{[]v1alpha1.Outcome{i, e, e}, "conflict", "3 policies · 2 Enforced · 1 Invalid"},
	}
	for _, tc := range cases {
		if got := outcomeClass(tc.outcomes); got != tc.class {
			t.Errorf("outcomeClass(%v) = %s, want %s", tc.outcomes, got, tc.class)
		}
		if got := policyLine(tc.outcomes); got != tc.line {
			t.Errorf("policyLine(%v) = %q, want %q", tc.outcomes, got, tc.line)
		}
	}
}

// TestBuildGraphSections: a context through a listener draws the Gateway,
// its listener as a node of its own under it, and the route under that.
func TestBuildGraphSections(t *testing.T) {
	gw := v1alpha1.ObjectReference{Group: "gateway.networking.k8s.io", Kind: "Gateway", Namespace: "infra", Name: "gw"}
	listener := gw
	listener.SectionName = "http"
	ep := &v1alpha1.EffectivePolicy{Targets: []v1alpha1.Target{{
		Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Name: "app",
		Policies: []v1alpha1.TargetPolicy{{Kind: "P", Sources: []v1alpha1.PolicySource{{Outcome: v1alpha1.OutcomeEnforced}},
			Effective: []v1alpha1.EffectiveSpec{{Via: []v1alpha1.ObjectReference{gw, listener}}}}},
	}}}
	ep.Namespace = "app"
	g := BuildGraph([]runtime.Object{ep})
	want := map[Edge]bool{
		{From: refID(gw), To: refID(listener)}:                                     true,
		{From: refID(listener), To: "gateway.networking.k8s.io/HTTPRoute/app/app"}: true,
	}
	if len(g.Edges) != len(want) {
		t.Fatalf("edges %v", g.Edges)
	}
	for _, e := range g.Edges {
		if !want[e] {
			t.Errorf("unexpected edge %v", e)
		}
	}
	for _, n := range g.Nodes {
		if n.ID == refID(listener) && (n.Label != "listener http" || n.Target) {
			t.Errorf("listener node %+v", n)
		}
	}
}

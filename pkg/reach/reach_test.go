package reach

import (
	"maps"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

const gw = "gateway.networking.k8s.io"

func output(ns, name string, sources map[string]v1alpha1.Outcome) *v1alpha1.EffectivePolicy {
	tp := v1alpha1.TargetPolicy{Group: "example.com", Kind: "RetryPolicy", Class: v1alpha1.ClassInherited}
	for _, p := range slices.Sorted(maps.Keys(sources)) {
		tp.Sources = append(tp.Sources, v1alpha1.PolicySource{
			Namespace: ns, Name: p, AttachedTo: v1alpha1.ObjectReference{Group: gw, Kind: "Gateway", Namespace: ns, Name: "gw", SectionName: "http"},
			Stanza: v1alpha1.StanzaDefaults, Outcome: sources[p],
		})
	}
	return &v1alpha1.EffectivePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Targets: []v1alpha1.Target{
		{Group: gw, Kind: "HTTPRoute", Name: name, Policies: []v1alpha1.TargetPolicy{tp}},
		{Group: gw, Kind: "Gateway", Name: name, Policies: []v1alpha1.TargetPolicy{tp}},
	}}
}

func TestFromOutput(t *testing.T) {
	es := FromOutput(output("apps", "gw", map[string]v1alpha1.Outcome{"p": v1alpha1.OutcomeEnforced}))
	if len(es) != 2 {
		t.Fatalf("entries %+v", es)
	}
	// Attached to a section of the target itself: the reach is that
	// section's; of another object (the route under it): none.
	if s := es[0].Reach.Target.SectionName; es[0].Reach.Target.Kind != "HTTPRoute" || s != "" {
		t.Errorf("route entry %+v", es[0].Reach.Target)
	}
	if s := es[1].Reach.Target.SectionName; es[1].Reach.Target.Kind != "Gateway" || s != "http" {
		t.Errorf("gateway entry %+v", es[1].Reach.Target)
	}
	if es[0].Policy != (compute.Key{Namespace: "apps", Name: "p"}) || es[0].Reach.Target.Namespace != "apps" {
		t.Errorf("entry %+v", es[0])
	}
	if FromOutput(&v1alpha1.PolicyReach{}) != nil {
		t.Error("entries from a reach")
	}
}

// TestIndexSet: Set returns exactly the policies whose entries changed.
func TestIndexSet(t *testing.T) {
	ix := NewIndex()
	k := func(n string) compute.Key { return compute.Key{Namespace: "apps", Name: n} }
	steps := []struct {
		name    string
		out     string
		sources map[string]v1alpha1.Outcome // nil: the output is gone
		changed []compute.Key
	}{
		{"first output", "r1", map[string]v1alpha1.Outcome{"p": "Enforced", "q": "Overridden"}, []compute.Key{k("p"), k("q")}},
		{"same again", "r1", map[string]v1alpha1.Outcome{"p": "Enforced", "q": "Overridden"}, []compute.Key{}},
		{"one verdict changes", "r1", map[string]v1alpha1.Outcome{"p": "Enforced", "q": "Enforced"}, []compute.Key{k("q")}},
		{"another output", "r2", map[string]v1alpha1.Outcome{"p": "Enforced"}, []compute.Key{k("p")}},
		{"a policy leaves an output", "r1", map[string]v1alpha1.Outcome{"q": "Enforced"}, []compute.Key{k("p")}},
		{"output gone", "r2", nil, []compute.Key{k("p")}},
	}
	for _, s := range steps {
		var es []Entry
		if s.sources != nil {
			es = FromOutput(output("apps", s.out, s.sources))
		}
		if got := ix.Set(k(s.out), es); !slices.Equal(got, s.changed) {
			t.Errorf("%s: changed %v, want %v", s.name, got, s.changed)
		}
	}
	if got := ix.Of(k("p")); len(got) != 0 {
		t.Errorf("p still has entries %+v", got)
	}
	if got := ix.Of(k("q"))[Kind{"example.com", "RetryPolicy"}]; len(got) != 2 || got[0].Target.Namespace != "apps" {
		t.Errorf("q reaches %+v, want 2 targets in apps", got)
	}
	if got := ix.Policies(); !slices.Equal(got, []compute.Key{k("q")}) {
		t.Errorf("Policies = %v", got)
	}
	// Every output gone: nothing interned is kept.
	ix.Set(k("r1"), nil)
	if n := len(ix.policies.ids) + len(ix.keys.ids) + len(ix.attachments.ids) + len(ix.verdicts.ids) + len(ix.outputs.ids) + len(ix.byPolicy) + len(ix.byOutput); n != 0 {
		t.Errorf("%d values kept after every output went", n)
	}
}

func TestBuild(t *testing.T) {
	if _, ok := Build(compute.Key{Namespace: "apps", Name: "p"}, nil, nil); ok {
		t.Error("a reach for no policy")
	}
	ix := NewIndex()
	for _, o := range []struct {
		name    string
		outcome v1alpha1.Outcome
	}{{"r2", "Overridden"}, {"r1", "Enforced"}} {
		ix.Set(compute.Key{Namespace: "apps", Name: o.name}, FromOutput(output("apps", o.name, map[string]v1alpha1.Outcome{"p": o.outcome})))
	}
	es := ix.Of(compute.Key{Namespace: "apps", Name: "p"})
	infos := []compute.PolicyInfo{
		{Group: "example.com", Kind: "RetryPolicy", Class: v1alpha1.ClassInherited, Semantics: v1alpha1.SemanticsAssumed, Labels: map[string]string{"team": "a", "x": "1"}},
		{Group: "example.com", Kind: "ZPolicy", Class: v1alpha1.ClassDirect, Semantics: "GEP", Labels: map[string]string{"team": "b", "y": "2"}},
	}
	obj, ok := Build(compute.Key{Namespace: "apps", Name: "p"}, infos, es)
	pr, _ := obj.(*v1alpha1.PolicyReach)
	if !ok || pr == nil || len(pr.Policies) != 2 {
		t.Fatalf("Build = %#v, %v", obj, ok)
	}
	if l := pr.Labels; l["team"] != "a" || l["x"] != "1" || l["y"] != "2" {
		t.Errorf("labels %v", l)
	}
	retry := pr.Policies[0]
	if retry.Semantics != v1alpha1.SemanticsAssumed || pr.Policies[1].Semantics != "GEP" {
		t.Errorf("semantics %q, %q: want the kinds'", retry.Semantics, pr.Policies[1].Semantics)
	}
	var order []string
	for _, r := range retry.Reaches {
		order = append(order, r.Target.Kind+"/"+r.Target.Name)
	}
	if want := []string{"Gateway/r1", "Gateway/r2", "HTTPRoute/r1", "HTTPRoute/r2"}; !slices.Equal(order, want) {
		t.Errorf("reaches %v, want %v", order, want)
	}
	if s := retry.Summary; s != (v1alpha1.ReachSummary{Targets: 4, Enforced: 2, Overridden: 2}) {
		t.Errorf("summary %+v", s)
	}
	if z := pr.Policies[1]; len(z.Reaches) != 0 || z.Summary != (v1alpha1.ReachSummary{}) {
		t.Errorf("a kind with no entries: %+v", z)
	}
	if obj, _ := Build(compute.Key{Name: "p"}, infos, nil); obj == nil {
		t.Error("no object")
	} else if _, ok := obj.(*v1alpha1.ClusterPolicyReach); !ok {
		t.Errorf("a cluster key builds %T", obj)
	}
}

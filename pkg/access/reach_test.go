package access_test

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/access"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/access/accesstest"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
)

func ref(kind, ns, name string) v1alpha1.ObjectReference {
	g := "gateway.networking.k8s.io"
	if kind == "Namespace" {
		g = ""
	}
	return v1alpha1.ObjectReference{Group: g, Kind: kind, Namespace: ns, Name: name}
}

func sampleReach(t *testing.T) *encoded.Object {
	t.Helper()
	o, err := encoded.New(&v1alpha1.PolicyReach{
		ObjectMeta: metav1.ObjectMeta{Name: "retry-all", Namespace: "infra"},
		Policies: []v1alpha1.ReachPolicy{{
			Group: "example.com", Kind: "RetryPolicy", Class: v1alpha1.ClassInherited,
			AttachedTo: []v1alpha1.AttachedTarget{{Target: ref("Gateway", "infra", "gw"), Resolved: true}, {Target: ref("Gateway", "apps", "gw2")}},
			Summary:    v1alpha1.ReachSummary{Targets: 4, Enforced: 3, Overridden: 1},
			Reaches: []v1alpha1.Reach{
				{Target: ref("Gateway", "infra", "gw"), Outcome: v1alpha1.OutcomeEnforced},
				{Target: ref("HTTPRoute", "apps", "a"), Outcome: v1alpha1.OutcomeEnforced},
				{Target: ref("HTTPRoute", "apps", "b"), Outcome: v1alpha1.OutcomeOverridden},
				{Target: ref("Namespace", "", "infra"), Outcome: v1alpha1.OutcomeEnforced},
			},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestReachFilter: targets are named only where the caller may get
// effectivepolicies (cluster-scoped ones: clustereffectivepolicies); the
// others are counted in hiddenTargets, the summary stays whole (docs/spec.md §8).
func TestReachFilter(t *testing.T) {
	cases := []struct {
		name       string
		authz      *accesstest.EffectivePolicyAuthorizer
		wantReach  []string
		wantNamed  []string
		wantHidden int32
		same       bool // served as stored, not re-encoded
	}{
		{"everywhere", &accesstest.EffectivePolicyAuthorizer{Namespaces: map[string]bool{"": true}, Cluster: true},
			[]string{"gw", "a", "b", "infra"}, []string{"gw", "gw2"}, 0, true},
		{"infra only", &accesstest.EffectivePolicyAuthorizer{Namespaces: map[string]bool{"infra": true}},
			[]string{"gw"}, []string{"gw"}, 3, false},
		{"infra and cluster", &accesstest.EffectivePolicyAuthorizer{Namespaces: map[string]bool{"infra": true}, Cluster: true},
			[]string{"gw", "infra"}, []string{"gw"}, 2, false},
		{"nothing", &accesstest.EffectivePolicyAuthorizer{},
			nil, nil, 4, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := sampleReach(t)
			f := access.NewReachFilter(access.NewChecker(tc.authz, time.Minute))
			u := &user.DefaultInfo{Name: "chihiro"}
			got := f.Filter(context.Background(), u, o)
			if (got == o) != tc.same {
				t.Errorf("served as stored = %v, want %v", got == o, tc.same)
			}
			ps, err := got.Policies()
			if err != nil || len(ps) != 1 {
				t.Fatalf("policies %v, %v", ps, err)
			}
			p := ps[0]
			var reached, named []string
			for _, r := range p.Reaches {
				reached = append(reached, r.Target.Name)
			}
			for _, a := range p.AttachedTo {
				named = append(named, a.Target.Name)
			}
			if !slices.Equal(reached, tc.wantReach) || !slices.Equal(named, tc.wantNamed) || p.HiddenTargets != tc.wantHidden {
				t.Errorf("reaches %v attachedTo %v hidden %d, want %v %v %d", reached, named, p.HiddenTargets, tc.wantReach, tc.wantNamed, tc.wantHidden)
			}
			if p.Summary.Targets != 4 || p.Summary.Enforced != 3 || p.Summary.Overridden != 1 {
				t.Errorf("summary %+v changed", p.Summary)
			}
			if s := got.Summary.Reach; s == nil || s.Counts.Targets != 4 {
				t.Errorf("table summary %+v", s)
			}
			// The stored object is untouched.
			if stored, _ := o.Policies(); len(stored[0].Reaches) != 4 {
				t.Errorf("the stored object was modified: %+v", stored)
			}
		})
	}
	// Decisions are cached: a second request asks nothing.
	a := &accesstest.EffectivePolicyAuthorizer{Namespaces: map[string]bool{"infra": true}}
	f := access.NewReachFilter(access.NewChecker(a, time.Minute))
	u := &user.DefaultInfo{Name: "chihiro"}
	f.Filter(context.Background(), u, sampleReach(t))
	n := a.Checks
	f.Filter(context.Background(), u, sampleReach(t))
	if a.Checks != n {
		t.Errorf("second request made %d more checks", a.Checks-n)
	}
	// No user: nothing named.
	if ps, _ := f.Filter(context.Background(), nil, sampleReach(t)).Policies(); len(ps[0].Reaches) != 0 {
		t.Errorf("an anonymous request sees %v", ps[0].Reaches)
	}
}

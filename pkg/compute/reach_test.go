package compute

import (
	"slices"
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// engineWith returns an engine fed with the test CRDs, topology and policies.
func engineWith(t *testing.T, topology, policies string) *Engine {
	t.Helper()
	e, err := NewEngine(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range worldObjs(t, topology, policies) {
		if isCRD(o) {
			e.Upsert(o)
		}
	}
	for _, o := range worldObjs(t, topology, policies) {
		if !isCRD(o) {
			e.Upsert(o)
		}
	}
	return e
}

// TestPolicyAttachedTo: what a PolicyReach says of each target a policy
// names (docs/spec.md §8): resolved, or TargetNotFound, ReferenceGrantMissing,
// Malformed, each with a message.
func TestPolicyAttachedTo(t *testing.T) {
	type want struct {
		name     string
		resolved bool
		reason   v1alpha1.AttachmentReason
	}
	cases := []struct {
		name string
		spec string
		ns   string
		want []want
	}{
		{"resolved", "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]", "appns",
			[]want{{"gw", true, ""}}},
		{"missing and present", "targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: gone}, {group: gateway.networking.k8s.io, kind: HTTPRoute, name: rt}]", "appns",
			[]want{{"gone", false, v1alpha1.ReasonTargetNotFound}, {"rt", true, ""}}},
		{"a kind the cluster does not serve is virtual, so resolved", "targetRefs: [{group: example.net, kind: Thing, name: x}]", "appns",
			[]want{{"x", true, ""}}},
		{"another namespace without a grant", "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw, namespace: appns}]", "other",
			[]want{{"gw", false, v1alpha1.ReasonReferenceGrantMissing}}},
		{"malformed policy", "targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]\n  defaults: 5", "appns",
			[]want{{"gw", false, v1alpha1.ReasonMalformed}}},
		{"malformed reference", "targetRefs: [{kind: 5, name: rt}, {group: gateway.networking.k8s.io, kind: Gateway, name: gw}]", "appns",
			// One malformed reference makes the whole policy malformed.
			[]want{{"rt", false, v1alpha1.ReasonMalformed}, {"gw", false, v1alpha1.ReasonMalformed}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pol := "apiVersion: example.com/v1\nkind: RetryPolicy\nmetadata: {name: p, namespace: " + tc.ns + ", labels: {team: infra}}\nspec:\n  " + tc.spec + "\n"
			e := engineWith(t, baseTopology, pol)
			infos := e.Policies(Key{tc.ns, "p"})
			if len(infos) != 1 || infos[0].Kind != retryK || infos[0].Labels["team"] != "infra" {
				t.Fatalf("Policies = %+v, want one RetryPolicy labeled team=infra", infos)
			}
			got := infos[0].AttachedTo
			if len(got) != len(tc.want) {
				t.Fatalf("attachedTo = %+v, want %d entries", got, len(tc.want))
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Resolved != w.resolved || g.Reason != w.reason || (w.name != "rt" || w.reason != v1alpha1.ReasonMalformed) && g.Target.Name != w.name {
					t.Errorf("attachedTo[%d] = %+v, want %+v", i, g, w)
				}
				if !g.Resolved && g.Message == "" {
					t.Errorf("attachedTo[%d] says no why: %+v", i, g)
				}
			}
		})
	}
	if got := engineWith(t, baseTopology, "").Policies(Key{"appns", "p"}); got != nil {
		t.Errorf("Policies of no policy = %+v", got)
	}
}

// TestTakeChangedPolicies: the policies whose own state changed, taken once.
func TestTakeChangedPolicies(t *testing.T) {
	pol := `
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: p, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: later}]
  attempts: 1
`
	e := engineWith(t, baseTopology, pol)
	if got := e.TakeChangedPolicies(); !slices.Equal(got, []Key{{"appns", "p"}}) {
		t.Errorf("after the policy arrived: %v", got)
	}
	if got := e.TakeChangedPolicies(); got != nil {
		t.Errorf("taken twice: %v", got)
	}
	if got := e.PolicyKeys(); !slices.Equal(got, []Key{{"appns", "p"}}) {
		t.Errorf("PolicyKeys = %v", got)
	}
	// The target it names appears: its attachedTo resolves.
	route := parseDocs(t, "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: later, namespace: appns}\nspec: {parentRefs: [{name: gw}]}\n")[0]
	e.Upsert(route)
	if got := e.TakeChangedPolicies(); !slices.Equal(got, []Key{{"appns", "p"}}) {
		t.Errorf("after its target appeared: %v", got)
	}
	if at := e.Policies(Key{"appns", "p"})[0].AttachedTo; !at[0].Resolved {
		t.Errorf("attachedTo after its target appeared: %+v", at)
	}
	// A labels-only edit changes no output but the policy.
	p := stamp(parseDocs(t, pol), 0)[0]
	p.SetLabels(map[string]string{"a": "b"})
	if keys := e.Upsert(p); len(keys) != 0 {
		t.Errorf("a labels-only edit changed outputs %v", keys)
	}
	if got := e.TakeChangedPolicies(); !slices.Equal(got, []Key{{"appns", "p"}}) {
		t.Errorf("after a labels edit: %v", got)
	}
	if l := e.Policies(Key{"appns", "p"})[0].Labels; l["a"] != "b" {
		t.Errorf("labels = %v", l)
	}
	// The same object again (a relist): nothing changed.
	e.Upsert(p)
	if got := e.TakeChangedPolicies(); got != nil {
		t.Errorf("after an unchanged upsert: %v", got)
	}
}

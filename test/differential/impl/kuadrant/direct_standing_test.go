package kuadrant

import (
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/oracles/kuadrant/agree"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/oracles/kuadrant/kuadrantoracle"
)

// oracleListener is listener name of Gateway ns/gw as the oracle reports it: the TLSPolicies
// Kuadrant picks for it and, when skipped is set, why it writes no Certificate for it.
func oracleListener(name, skipped string, tls ...string) kuadrantoracle.Listener {
	return kuadrantoracle.Listener{Namespace: "ns", Gateway: "gw", Listener: name, TLSPolicies: tls, TLSSkipped: skipped}
}

// TestDirectStanding: where Kuadrant writes nothing of a policy because of the listeners it
// skips, the standing compares that with the engine listing it nowhere (or only beaten);
// elsewhere Kuadrant's Accepted condition is compared as read.
func TestDirectStanding(t *testing.T) {
	at := directAt
	gwPolicy, l1Policy := directPolicy("TLSPolicy", "a", "", at), directPolicy("TLSPolicy", "a", "l1", at)
	const noTLS = "the TLS block cannot be empty"
	for _, tc := range []struct {
		name                 string
		listeners            []kuadrantoracle.Listener
		policy               int // 0: on the Gateway, 1: on l1
		theirs, ours         agree.Verdict
		wantTheirs, wantOurs agree.Verdict
	}{
		{"gateway policy, every listener skipped", []kuadrantoracle.Listener{oracleListener("l1", noTLS, "ns/a"), oracleListener("l2", noTLS, "ns/a")},
			0, agree.InEffect, agree.NotFound, agree.NoListenerServed, agree.NoListenerServed},
		{"conflicted listener policy on a skipped listener", []kuadrantoracle.Listener{oracleListener("l1", noTLS), oracleListener("l2", "")},
			1, agree.Conflicted, agree.NotFound, agree.NoListenerServed, agree.NoListenerServed},
		{"every listener skipped, yet the engine shows it in effect", []kuadrantoracle.Listener{oracleListener("l1", noTLS, "ns/a")},
			0, agree.InEffect, agree.InEffect, agree.NoListenerServed, agree.InEffect},
		{"gateway policy beaten on the served listener, picked for a skipped one", []kuadrantoracle.Listener{oracleListener("l1", "", "ns/b"), oracleListener("l2", noTLS, "ns/a")},
			0, agree.InEffect, agree.Conflicted, agree.AppliedNowhere, agree.AppliedNowhere},
		{"applied nowhere, yet in effect in the engine", []kuadrantoracle.Listener{oracleListener("l1", "", "ns/b"), oracleListener("l2", noTLS, "ns/a")},
			0, agree.InEffect, agree.InEffect, agree.AppliedNowhere, agree.InEffect},
		{"applied on a served listener: Accepted as read", []kuadrantoracle.Listener{oracleListener("l1", "", "ns/a"), oracleListener("l2", noTLS, "ns/a")},
			0, agree.InEffect, agree.InEffect, agree.InEffect, agree.InEffect},
		{"no listener skipped: Accepted as read", []kuadrantoracle.Listener{oracleListener("l1", "", "ns/b"), oracleListener("l2", "", "ns/c")},
			0, agree.InEffect, agree.InEffect, agree.InEffect, agree.InEffect},
		{"target not found: as read", []kuadrantoracle.Listener{oracleListener("l2", noTLS)},
			1, agree.NotFound, agree.NotFound, agree.NotFound, agree.NotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := gwPolicy
			if tc.policy == 1 {
				p = l1Policy
			}
			theirs, ours := agree.DirectStanding(&kuadrantoracle.Result{Listeners: tc.listeners}, p, tc.theirs, tc.ours)
			if theirs != tc.wantTheirs || ours != tc.wantOurs {
				t.Errorf("DirectStanding = %q, %q; want %q, %q", theirs, ours, tc.wantTheirs, tc.wantOurs)
			}
		})
	}
}

// TestListenerChecksSkipped: on a listener Kuadrant writes nothing for, only what it applies
// (nothing) is compared, not what it picks.
func TestListenerChecksSkipped(t *testing.T) {
	res := &kuadrantoracle.Result{Listeners: []kuadrantoracle.Listener{
		{Namespace: "ns", Gateway: "gw", Listener: "l1", DNSPolicies: []string{"ns/d"}, TLSPolicies: []string{"ns/t"}, TLSSkipped: "the TLS block cannot be empty"},
	}}
	got := map[string]string{}
	for _, c := range listenerChecks(res, nil) {
		got[c.Kind+" "+c.Field] = c.Theirs
	}
	want := map[string]string{"DNSPolicy applied": "ns/d", "DNSPolicy assigned": "ns/d", "TLSPolicy applied": ""}
	if len(got) != len(want) {
		t.Errorf("checks %v, want %v", got, want)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s: theirs %q (present %v), want %q", k, g, ok, v)
		}
	}
}

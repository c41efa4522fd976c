package kuadrant

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/oracles/kuadrant/agree"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/oracles/kuadrant/kuadrantoracle"
)

// Fields of the listener checks of DNSPolicy and TLSPolicy.
const (
	// FieldAssigned: the policies Kuadrant's selection picks for the
	// listener (listenersForPolicy, getTLSPoliciesForListener; accepted,
	// valid ones), whether or not it then writes anything for it.
	FieldAssigned = "assigned"
	// FieldApplied: the policies Kuadrant writes a DNSRecord or a
	// Certificate of for the listener: the assigned ones, none when the
	// reconciler skips the listener (no hostname; for TLS a listener
	// validateGatewayListenerBlock refuses).
	FieldApplied = "applied"
)

// directKinds are Kuadrant's kinds applied per listener.
var directKinds = map[string]bool{gen.DNS: true, gen.TLS: true}

// listenerChecks: for every listener Kuadrant's topology has and each of
// DNSPolicy and TLSPolicy, the policies it applies and, on a listener it
// writes something for, the policies it picks, against the policies of the
// engine's entry for the listener (the Gateway entry of its section, else
// of the whole Gateway). On a listener Kuadrant writes nothing for, the
// engine gives the kind no entry (docs/spec.md §4.1, Kuadrant), so there
// only what is applied (nothing) is compared.
func listenerChecks(res *kuadrantoracle.Result, outs map[compute.Key]runtime.Object) []differential.Check {
	ours := agree.OurListenerPolicies(outs)
	var checks []differential.Check
	for _, l := range res.Listeners {
		target := differential.Node{Kind: "Gateway", Namespace: l.Namespace, Name: l.Gateway, Section: l.Listener}
		subject := l.Namespace + "/" + l.Gateway + "#" + l.Listener
		for _, kind := range []string{gen.DNS, gen.TLS} {
			mine := strings.Join(ours.Of(l.Namespace, l.Gateway, l.Listener, kind), ",")
			applied, skipped := agree.Applied(l, kind)
			fields := []struct{ field, theirs string }{{FieldApplied, strings.Join(applied, ",")}}
			if skipped == "" {
				fields = append(fields, struct{ field, theirs string }{FieldAssigned, strings.Join(agree.Assigned(l, kind), ",")})
			}
			for _, c := range fields {
				checks = append(checks, differential.Check{Kind: kind, Subject: subject, Field: c.field,
					Theirs: c.theirs, Ours: mine, Target: target, Path: []differential.Node{target}})
			}
		}
	}
	return checks
}

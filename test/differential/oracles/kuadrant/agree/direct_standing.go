package agree

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/oracles/kuadrant/kuadrantoracle"
)

// Standings of a DNSPolicy or TLSPolicy where the engine, by decision,
// shows no entry (docs/spec.md §4.1, Kuadrant: a listener Kuadrant writes
// nothing for gets no entry of the kind).
const (
	// NoListenerServed: every listener of the policy's target is one
	// Kuadrant writes nothing of the kind for; the engine lists the policy
	// nowhere, whatever its Accepted condition.
	NoListenerServed Verdict = "NoListenerServed"
	// AppliedNowhere: Kuadrant accepts the policy and applies it on no
	// listener, and its target has a listener Kuadrant writes nothing for;
	// the engine lists it nowhere, or only where another policy beats it.
	AppliedNowhere Verdict = "AppliedNowhere"
)

// DirectStanding is the standing check of a DNSPolicy or TLSPolicy p:
// Kuadrant's Accepted condition, the status its code gives offline (its
// Enforced condition reads DNSRecords and Certificates in the cluster),
// against our outcomes over its targets (theirs and ours as read), but
// NoListenerServed or AppliedNowhere where Kuadrant writes nothing of p
// because of listeners it skips.
func DirectStanding(res *kuadrantoracle.Result, p *unstructured.Unstructured, theirs, ours Verdict) (Verdict, Verdict) {
	kind, policy := p.GetKind(), p.GetNamespace()+"/"+p.GetName()
	ref, _, _ := unstructured.NestedStringMap(p.Object, "spec", "targetRef")
	var target []kuadrantoracle.Listener
	for _, l := range res.Listeners {
		if l.Namespace == p.GetNamespace() && l.Gateway == ref["name"] && (ref["sectionName"] == "" || l.Listener == ref["sectionName"]) {
			target = append(target, l)
		}
	}
	served, skipped, applied := 0, 0, false
	for _, l := range target {
		names, why := Applied(l, kind)
		if why != "" {
			skipped++
		} else {
			served++
		}
		applied = applied || slices.Contains(names, policy)
	}
	switch {
	case len(target) > 0 && served == 0:
		theirs = NoListenerServed
		if ours == NotFound {
			ours = NoListenerServed
		}
	case theirs == InEffect && !applied && skipped > 0:
		theirs = AppliedNowhere
		if ours == NotFound || ours == Conflicted {
			ours = AppliedNowhere
		}
	}
	return theirs, ours
}

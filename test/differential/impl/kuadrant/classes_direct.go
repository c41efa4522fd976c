package kuadrant

import (
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/oracles/kuadrant/agree"
)

// Known classes of DNSPolicy and TLSPolicy disagreements (docs/differential.md).
const (
	// SameSecondTie: two policies of one kind on one target created in the
	// same second. Kuadrant's isConflict (dnspolicies_validator.go,
	// tlspolicies_validator.go) rejects a policy only when another is
	// strictly older (metav1.Time.Before), so both stay Accepted and both
	// are applied to the target's listeners, each writing the one DNSRecord
	// or Certificate named after the listener (dnsRecordName, certName):
	// they overwrite each other. The engine keeps one, the first by
	// namespace/name, and reports the other Conflicted.
	SameSecondTie = "DNSPolicy/TLSPolicy same-second tie on one target"
	// IssuerKindUnset: a TLSPolicy whose issuerRef has no kind, which
	// means an Issuer of its namespace (the CRD's doc, and
	// tlspolicies_validator.go isIssuerFound, which accepts "" or
	// "Issuer"). Kuadrant links a TLSPolicy to an Issuer only when the kind
	// is "Issuer" exactly (tls_workflow.go LinkTLSPolicyToIssuerFunc), so
	// isIssuerFound never sees the Issuer, and the policy is Accepted=False,
	// Invalid "unable to find issuer", and applied nowhere, although the
	// Issuer exists (the harness gives the oracle every issuer a TLSPolicy
	// names, agree.Issuers). A Kuadrant bug; the engine applies the policy.
	IssuerKindUnset = "TLSPolicy with issuerRef.kind unset: Kuadrant never finds its Issuer"
)

func init() {
	for _, name := range []string{SameSecondTie, IssuerKindUnset} {
		differential.RegisterKnown(differential.KnownClass{Name: name, Impl: "kuadrant", Match: func(c differential.Check, objs []*unstructured.Unstructured) bool {
			return DirectClass(objs, c) == name
		}})
	}
}

// DirectClass returns the known class of a DNSPolicy or TLSPolicy
// disagreement, or "".
func DirectClass(objs []*unstructured.Unstructured, c differential.Check) string {
	if !directKinds[c.Kind] || c.Agree() {
		return ""
	}
	switch {
	case c.Field == "standing" && c.Theirs == "NotAccepted:Invalid" && c.Ours == string(agree.InEffect):
		if p := findPolicy(objs, c.Kind, c.Policy); p != nil && issuerKindUnset(p) {
			return IssuerKindUnset
		}
		return ""
	case c.Field == "standing" && c.Ours == string(agree.Conflicted):
		// Not Conflicted in Kuadrant for the tie: then accepted, or Invalid when it is a
		// TLSPolicy whose Issuer Kuadrant never finds (IssuerKindUnset).
		p := findPolicy(objs, c.Kind, c.Policy)
		accepted := c.Theirs == string(agree.InEffect) || c.Theirs == "NotAccepted:Invalid" && p != nil && issuerKindUnset(p)
		if accepted && p != nil && len(tiedWith(objs, p)) > 0 {
			return SameSecondTie
		}
		// Not tied, Invalid for its issuer kind alone (isConflict runs first): without the bug
		// Kuadrant would accept it, and a Gateway policy beaten on every listener Kuadrant writes
		// a Certificate for by the listener's own policy is Conflicted in the engine wherever it
		// is listed, as agree.AppliedNowhere allows (agree.DirectStanding).
		if c.Theirs == "NotAccepted:Invalid" && p != nil && issuerKindUnset(p) {
			return IssuerKindUnset
		}
	}
	if c.Field == FieldAssigned || c.Field == FieldApplied {
		return listClass(objs, c)
	}
	return ""
}

func issuerKindUnset(p *unstructured.Unstructured) bool {
	if p.GetKind() != "TLSPolicy" {
		return false
	}
	_, set, _ := unstructured.NestedString(p.Object, "spec", "issuerRef", "kind")
	return !set
}

// listClass explains a listener check whose lists differ: every policy we
// list and Kuadrant does not is a TLSPolicy with issuerRef.kind unset
// (Kuadrant rejects it), and every policy Kuadrant lists and we do not is
// tied with one we list (Kuadrant accepts both). SameSecondTie when
// Kuadrant lists any we do not (the tie decides which one holds the
// listener), else IssuerKindUnset.
func listClass(objs []*unstructured.Unstructured, c differential.Check) string {
	theirs, ours := splitList(c.Theirs), splitList(c.Ours)
	tie := false
	for _, t := range theirs {
		if slices.Contains(ours, t) {
			continue
		}
		p := findPolicy(objs, c.Kind, t)
		if p == nil {
			return ""
		}
		tied := false
		for _, q := range tiedWith(objs, p) {
			tied = tied || slices.Contains(ours, q.GetNamespace()+"/"+q.GetName())
		}
		if !tied {
			return ""
		}
		tie = true
	}
	unset := false
	for _, o := range ours {
		if slices.Contains(theirs, o) {
			continue
		}
		if p := findPolicy(objs, c.Kind, o); p == nil || !issuerKindUnset(p) {
			return ""
		}
		unset = true
	}
	switch {
	case tie:
		return SameSecondTie
	case unset:
		return IssuerKindUnset
	}
	return ""
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// tiedWith are the other policies of p's kind with p's namespace, the same
// targetRef (sectionName included, as isConflict compares it) and the same
// creationTimestamp.
func tiedWith(objs []*unstructured.Unstructured, p *unstructured.Unstructured) []*unstructured.Unstructured {
	ref, _, _ := unstructured.NestedMap(p.Object, "spec", "targetRef")
	at := p.GetCreationTimestamp()
	var out []*unstructured.Unstructured
	for _, q := range objs {
		if q == p || q.GetKind() != p.GetKind() || q.GetNamespace() != p.GetNamespace() || q.GetName() == p.GetName() {
			continue
		}
		qref, _, _ := unstructured.NestedMap(q.Object, "spec", "targetRef")
		if qat := q.GetCreationTimestamp(); qat.Equal(&at) && reflect.DeepEqual(ref, qref) {
			out = append(out, q)
		}
	}
	return out
}

func findPolicy(objs []*unstructured.Unstructured, kind, nsName string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetNamespace()+"/"+o.GetName() == nsName {
			return o
		}
	}
	return nil
}

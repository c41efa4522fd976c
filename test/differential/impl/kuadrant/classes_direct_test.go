package kuadrant

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/oracles/kuadrant/agree"
)

var directAt = time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC)

func directPolicy(kind, name, section string, created time.Time) *unstructured.Unstructured {
	ref := map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw"}
	if section != "" {
		ref["sectionName"] = section
	}
	p := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kuadrant.io/v1", "kind": kind,
		"spec": map[string]any{"targetRef": ref}}}
	p.SetNamespace("ns")
	p.SetName(name)
	p.SetCreationTimestamp(metav1.NewTime(created))
	return p
}

func directGateway(listener map[string]any) *unstructured.Unstructured {
	listener["name"] = "l1"
	g := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
		"spec": map[string]any{"listeners": []any{listener}}}}
	g.SetNamespace("ns")
	g.SetName("gw")
	return g
}

func certs(ref map[string]any) map[string]any { return map[string]any{"certificateRefs": []any{ref}} }

// httpsGateway has listener l1, which Kuadrant writes Certificates for.
func httpsGateway() *unstructured.Unstructured {
	return directGateway(map[string]any{"protocol": "HTTPS", "hostname": "a.example.com", "tls": certs(map[string]any{"name": "c"})})
}

func standingCheck(kind, name string) differential.Check {
	return differential.Check{Kind: kind, Subject: kind + " ns/" + name, Field: "standing",
		Theirs: string(agree.InEffect), Ours: string(agree.Conflicted), Policy: "ns/" + name}
}

func listenerCheck(kind, field, theirs, ours string) differential.Check {
	return differential.Check{Kind: kind, Subject: "ns/gw#l1", Field: field, Theirs: theirs, Ours: ours,
		Target: differential.Node{Kind: "Gateway", Namespace: "ns", Name: "gw", Section: "l1"}}
}

type directClassCase struct {
	name string
	objs []*unstructured.Unstructured
	c    differential.Check
	want string
}

// tieClassCases: SameSecondTie and IssuerKindUnset, and their near misses.
func tieClassCases() []directClassCase {
	at, https := directAt, httpsGateway()
	policy, standing, listener := directPolicy, standingCheck, listenerCheck
	return []directClassCase{
		{"tie: both accepted by Kuadrant", []*unstructured.Unstructured{https, policy("DNSPolicy", "a", "", at), policy("DNSPolicy", "b", "", at)},
			standing("DNSPolicy", "b"), SameSecondTie},
		{"tie on a listener, TLS", []*unstructured.Unstructured{https, policy("TLSPolicy", "a", "l1", at), policy("TLSPolicy", "b", "l1", at)},
			standing("TLSPolicy", "b"), SameSecondTie},
		{"tie, the newer one's Issuer never found", []*unstructured.Unstructured{https, withIssuerKind(policy("TLSPolicy", "a", "", at), "Issuer"), policy("TLSPolicy", "b", "", at)},
			differential.Check{Kind: "TLSPolicy", Field: "standing", Theirs: "NotAccepted:Invalid", Ours: string(agree.Conflicted), Policy: "ns/b"}, SameSecondTie},
		{"Invalid for another reason, tied", []*unstructured.Unstructured{https, policy("TLSPolicy", "a", "", at), withIssuerKind(policy("TLSPolicy", "b", "", at), "Issuer")},
			differential.Check{Kind: "TLSPolicy", Field: "standing", Theirs: "NotAccepted:Invalid", Ours: string(agree.Conflicted), Policy: "ns/b"}, ""},
		{"not a tie: a second apart", []*unstructured.Unstructured{https, policy("DNSPolicy", "a", "", at), policy("DNSPolicy", "b", "", at.Add(time.Second))},
			standing("DNSPolicy", "b"), ""},
		{"not a tie: other sections", []*unstructured.Unstructured{https, policy("DNSPolicy", "a", "", at), policy("DNSPolicy", "b", "l1", at)},
			standing("DNSPolicy", "b"), ""},
		{"not a tie: other kinds", []*unstructured.Unstructured{https, policy("TLSPolicy", "a", "", at), policy("DNSPolicy", "b", "", at)},
			standing("DNSPolicy", "b"), ""},
		{"tie: Kuadrant picks both for the listener", []*unstructured.Unstructured{https, policy("DNSPolicy", "a", "", at), policy("DNSPolicy", "b", "", at)},
			listener("DNSPolicy", FieldAssigned, "ns/a,ns/b", "ns/a"), SameSecondTie},
		{"tie, ours rejected by Kuadrant for its issuer kind", []*unstructured.Unstructured{https, policy("TLSPolicy", "a", "", at), withIssuerKind(policy("TLSPolicy", "b", "", at), "Issuer")},
			listener("TLSPolicy", FieldAssigned, "ns/b", "ns/a"), SameSecondTie},
		{"not a tie, ours rejected for its issuer kind", []*unstructured.Unstructured{https, policy("TLSPolicy", "a", "", at), withIssuerKind(policy("TLSPolicy", "b", "", at.Add(time.Second)), "Issuer")},
			listener("TLSPolicy", FieldAssigned, "ns/b", "ns/a"), ""},
		{"not a tie: the extra one is not tied", []*unstructured.Unstructured{https, policy("DNSPolicy", "a", "", at), policy("DNSPolicy", "b", "", at.Add(time.Second))},
			listener("DNSPolicy", FieldAssigned, "ns/a,ns/b", "ns/a"), ""},
		{"not a tie: ours lists one Kuadrant does not", []*unstructured.Unstructured{https, policy("DNSPolicy", "a", "", at), policy("DNSPolicy", "b", "", at)},
			listener("DNSPolicy", FieldAssigned, "ns/b", "ns/a"), ""},
	}
}

// listenerClassCases: IssuerKindUnset and its near misses; and an applied
// disagreement on a listener Kuadrant writes nothing for, which is of no
// class: the engine gives such a listener no entry of the kind
// (docs/spec.md §4.1, Kuadrant), so ours there is an engine bug.
func listenerClassCases() []directClassCase {
	at, https, gateway := directAt, httpsGateway(), directGateway
	policy, listener := directPolicy, listenerCheck
	return []directClassCase{
		{"DNS, listener without hostname: no class", []*unstructured.Unstructured{gateway(map[string]any{"protocol": "HTTP"}), policy("DNSPolicy", "a", "", at)},
			listener("DNSPolicy", FieldApplied, "", "ns/a"), ""},
		{"DNS, listener with a hostname", []*unstructured.Unstructured{gateway(map[string]any{"protocol": "HTTP", "hostname": "a.example.com"}), policy("DNSPolicy", "a", "", at)},
			listener("DNSPolicy", FieldApplied, "", "ns/a"), ""},
		{"DNS, not picked either: the selection differs", []*unstructured.Unstructured{gateway(map[string]any{"protocol": "HTTP"}), policy("DNSPolicy", "a", "", at)},
			listener("DNSPolicy", FieldAssigned, "", "ns/a"), ""},
		{"TLS, HTTP listener: no class", []*unstructured.Unstructured{gateway(map[string]any{"protocol": "HTTP", "hostname": "a.example.com"}), withIssuerKind(policy("TLSPolicy", "a", "", at), "ClusterIssuer")},
			listener("TLSPolicy", FieldApplied, "", "ns/a"), ""},
		{"TLS, passthrough: no class", []*unstructured.Unstructured{gateway(map[string]any{"protocol": "TLS", "hostname": "a.example.com", "tls": map[string]any{"mode": "Passthrough"}}), withIssuerKind(policy("TLSPolicy", "a", "", at), "ClusterIssuer")},
			listener("TLSPolicy", FieldApplied, "", "ns/a"), ""},
		{"TLS, certificate of another namespace: no class", []*unstructured.Unstructured{gateway(map[string]any{"protocol": "HTTPS", "hostname": "a.example.com", "tls": certs(map[string]any{"name": "c", "namespace": "other"})}), withIssuerKind(policy("TLSPolicy", "a", "", at), "ClusterIssuer")},
			listener("TLSPolicy", FieldApplied, "", "ns/a"), ""},
		{"TLS, HTTPS without hostname: no class", []*unstructured.Unstructured{gateway(map[string]any{"protocol": "HTTPS", "tls": certs(map[string]any{"name": "c"})}), withIssuerKind(policy("TLSPolicy", "a", "", at), "ClusterIssuer")},
			listener("TLSPolicy", FieldApplied, "", "ns/a"), ""},
		{"TLS, a listener Kuadrant serves", []*unstructured.Unstructured{https, withIssuerKind(policy("TLSPolicy", "a", "", at), "ClusterIssuer")},
			listener("TLSPolicy", FieldApplied, "", "ns/a"), ""},
		{"issuer kind unset: Kuadrant finds no Issuer", []*unstructured.Unstructured{https, policy("TLSPolicy", "a", "", at)},
			differential.Check{Kind: "TLSPolicy", Field: "standing", Theirs: "NotAccepted:Invalid", Ours: string(agree.InEffect), Policy: "ns/a"}, IssuerKindUnset},
		{"issuer kind unset, a Gateway policy beaten on its only served listener", []*unstructured.Unstructured{https, policy("TLSPolicy", "a", "", at), withIssuerKind(policy("TLSPolicy", "b", "l1", at.Add(-time.Second)), "Issuer")},
			differential.Check{Kind: "TLSPolicy", Field: "standing", Theirs: "NotAccepted:Invalid", Ours: string(agree.Conflicted), Policy: "ns/a"}, IssuerKindUnset},
		{"issuer kind Issuer, Conflicted in the engine: not this class", []*unstructured.Unstructured{https, withIssuerKind(policy("TLSPolicy", "a", "", at), "Issuer")},
			differential.Check{Kind: "TLSPolicy", Field: "standing", Theirs: "NotAccepted:Invalid", Ours: string(agree.Conflicted), Policy: "ns/a"}, ""},
		{"issuer kind Issuer: not this class", []*unstructured.Unstructured{https, withIssuerKind(policy("TLSPolicy", "a", "", at), "Issuer")},
			differential.Check{Kind: "TLSPolicy", Field: "standing", Theirs: "NotAccepted:Invalid", Ours: string(agree.InEffect), Policy: "ns/a"}, ""},
		{"issuer kind unset: applied nowhere", []*unstructured.Unstructured{https, policy("TLSPolicy", "a", "l1", at)},
			listener("TLSPolicy", FieldAssigned, "", "ns/a"), IssuerKindUnset},
		{"issuer kind unset, on a listener Kuadrant serves", []*unstructured.Unstructured{https, policy("TLSPolicy", "a", "l1", at)},
			listener("TLSPolicy", FieldApplied, "", "ns/a"), IssuerKindUnset},
		{"issuer kind ClusterIssuer: the selection differs", []*unstructured.Unstructured{https, withIssuerKind(policy("TLSPolicy", "a", "l1", at), "ClusterIssuer")},
			listener("TLSPolicy", FieldAssigned, "", "ns/a"), ""},
		{"a data-plane kind is never of these classes", []*unstructured.Unstructured{gateway(map[string]any{"protocol": "HTTP"}), policy("RateLimitPolicy", "a", "", at)},
			listener("RateLimitPolicy", FieldApplied, "", "ns/a"), ""},
	}
}

// TestDirectClasses: each known class of DNSPolicy and TLSPolicy
// disagreements takes the disagreement its cause explains and refuses
// near misses that lack one of the facts it needs.
func TestDirectClasses(t *testing.T) {
	for _, tt := range append(tieClassCases(), listenerClassCases()...) {
		t.Run(tt.name, func(t *testing.T) {
			if got := DirectClass(tt.objs, tt.c); got != tt.want {
				t.Errorf("DirectClass = %q, want %q", got, tt.want)
			}
		})
	}
}

func withIssuerKind(p *unstructured.Unstructured, kind string) *unstructured.Unstructured {
	_ = unstructured.SetNestedField(p.Object, kind, "spec", "issuerRef", "kind")
	return p
}

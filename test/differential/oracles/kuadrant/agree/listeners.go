package agree

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/oracles/kuadrant/kuadrantoracle"
)

// gatewayEntries maps "namespace/gateway kind" to the engine's effective entries of a DNSPolicy or
// TLSPolicy kind on that Gateway.
type gatewayEntries map[string][]v1alpha1.EffectiveSpec

func ourGatewayEntries(outs map[compute.Key]runtime.Object) gatewayEntries {
	out := gatewayEntries{}
	for key, o := range outs {
		ep, ok := o.(*v1alpha1.EffectivePolicy)
		if !ok {
			continue
		}
		for _, t := range ep.Targets {
			if t.Kind != "Gateway" {
				continue
			}
			for _, tp := range t.Policies {
				if tp.Group == "kuadrant.io" && directKinds[tp.Kind] {
					k := key.Namespace + "/" + t.Name + " " + tp.Kind
					out[k] = append(out[k], tp.Effective...)
				}
			}
		}
	}
	return out
}

// CompareListeners compares, listener by listener, the DNSPolicies and TLSPolicies Kuadrant
// applies (Applied) with the policies of the engine's entry for that listener (ListenerPolicies).
func CompareListeners(res *kuadrantoracle.Result, outs map[compute.Key]runtime.Object) []string {
	ours := OurListenerPolicies(outs)
	var out []string
	for _, l := range res.Listeners {
		for _, kind := range []string{"DNSPolicy", "TLSPolicy"} {
			want, why := Applied(l, kind)
			got := ours.Of(l.Namespace, l.Gateway, l.Listener, kind)
			if strings.Join(got, ",") != strings.Join(want, ",") {
				out = append(out, fmt.Sprintf("%s on %s/%s#%s: Kuadrant %v, ours %v %s", kind, l.Namespace, l.Gateway, l.Listener, want, got, why))
			}
		}
	}
	sort.Strings(out)
	return out
}

// Assigned are the policies ("namespace/name", sorted) of kind (DNSPolicy or TLSPolicy) that
// Kuadrant's selection picks for listener l (listenersForPolicy, getTLSPoliciesForListener),
// whether or not it then writes anything for the listener.
func Assigned(l kuadrantoracle.Listener, kind string) []string {
	if kind == "TLSPolicy" {
		return l.TLSPolicies
	}
	return l.DNSPolicies
}

// Applied are the policies of kind Kuadrant writes a DNSRecord or Certificate of for listener l:
// the assigned ones, or none when the reconciler skips the listener (why says why).
func Applied(l kuadrantoracle.Listener, kind string) (policies []string, why string) {
	why = l.DNSSkipped
	if kind == "TLSPolicy" {
		why = l.TLSSkipped
	}
	if why != "" {
		return nil, why
	}
	return Assigned(l, kind), ""
}

// ListenerPolicies are the engine's DNSPolicy and TLSPolicy entries of every Gateway.
type ListenerPolicies struct{ entries gatewayEntries }

// OurListenerPolicies reads the engine's Gateway entries of the DNSPolicy and TLSPolicy kinds.
func OurListenerPolicies(outs map[compute.Key]runtime.Object) ListenerPolicies {
	return ListenerPolicies{ourGatewayEntries(outs)}
}

// Of are the policies ("namespace/name", sorted) of kind in effect, by the engine, on listener
// of Gateway namespace/gateway: the sources of the Gateway entry with the listener's
// sectionName, else of the Gateway's entry without section.
func (p ListenerPolicies) Of(namespace, gateway, listener, kind string) []string {
	return listenerPolicies(p.entries[namespace+"/"+gateway+" "+kind], listener)
}

// Issuers returns the cert-manager Issuer or ClusterIssuer each TLSPolicy of objs names. The
// engine cannot see them (they are outside the Gateway API and policy objects it reads);
// Kuadrant rejects a TLSPolicy whose issuer it cannot find (tlspolicies_validator.go
// isIssuerFound), so the oracle is given them.
func Issuers(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	seen := map[string]bool{}
	for _, o := range objs {
		if o.GetKind() != "TLSPolicy" {
			continue
		}
		name, _, _ := unstructured.NestedString(o.Object, "spec", "issuerRef", "name")
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "issuerRef", "kind")
		issuer := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cert-manager.io/v1", "kind": "Issuer"}}
		issuer.SetName(name)
		if kind == "ClusterIssuer" {
			issuer.SetKind(kind)
		} else {
			issuer.SetNamespace(o.GetNamespace())
		}
		key := issuer.GetKind() + " " + issuer.GetNamespace() + "/" + name
		if !seen[key] {
			seen[key] = true
			out = append(out, issuer)
		}
	}
	return out
}

func listenerPolicies(entries []v1alpha1.EffectiveSpec, listener string) []string {
	var whole, section *v1alpha1.EffectiveSpec
	for i := range entries {
		switch entries[i].SectionName {
		case listener:
			section = &entries[i]
		case "":
			whole = &entries[i]
		}
	}
	e := section
	if e == nil {
		e = whole
	}
	if e == nil {
		return nil
	}
	set := map[string]bool{}
	for _, src := range e.FieldSources {
		set[src] = true
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

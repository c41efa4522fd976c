package agree

import (
	"fmt"
	"sort"
	"strings"

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
// applies with the policies of the engine's entry for that listener (the Gateway entry with the
// listener's sectionName, else the Gateway's entry without section).
func CompareListeners(res *kuadrantoracle.Result, outs map[compute.Key]runtime.Object) []string {
	ours := ourGatewayEntries(outs)
	var out []string
	for _, l := range res.Listeners {
		for kind, want := range map[string][]string{"DNSPolicy": l.DNSPolicies, "TLSPolicy": l.TLSPolicies} {
			got := listenerPolicies(ours[l.Namespace+"/"+l.Gateway+" "+kind], l.Listener)
			if strings.Join(got, ",") != strings.Join(want, ",") {
				why := l.DNSSkipped
				if kind == "TLSPolicy" {
					why = l.TLSSkipped
				}
				out = append(out, fmt.Sprintf("%s on %s/%s#%s: Kuadrant %v, ours %v %s", kind, l.Namespace, l.Gateway, l.Listener, want, got, why))
			}
		}
	}
	sort.Strings(out)
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

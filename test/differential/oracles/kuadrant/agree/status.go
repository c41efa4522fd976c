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

// Verdict is one policy's standing, read the same way from both sides:
//   - InEffect: some of it is in effect;
//   - Overridden: it reaches routes but every one of its entries is replaced there;
//   - NoRoutes: it is accepted but reaches no route;
//   - Conflicted: a DNSPolicy or TLSPolicy that another one on its target beats;
//   - NotFound: its target does not exist.
type Verdict string

// The verdicts (see Verdict).
const (
	InEffect   Verdict = "InEffect"
	Overridden Verdict = "Overridden"
	NoRoutes   Verdict = "NoRoutes"
	Conflicted Verdict = "Conflicted"
	NotFound   Verdict = "NotFound"
)

// directKinds are the Kuadrant kinds computed per target, with a conflict rule, not per path.
var directKinds = map[string]bool{"DNSPolicy": true, "TLSPolicy": true}

// OracleVerdicts reads each policy's conditions as Kuadrant sets them. For the data-plane kinds,
// Enforced=False with reason Overridden, or Unknown "not in the path to any existing routes", is
// Overridden or NoRoutes; any other Enforced condition is InEffect: the oracle has no Limitador or
// Authorino, so a policy in effect reads MissingResource, and a TokenRateLimitPolicy with some
// entries replaced and others in effect reads Unknown "policy rule(s) overridden" (where a
// RateLimitPolicy would read Enforced "partially enforced"). For DNSPolicy and TLSPolicy, Accepted
// is read: Conflicted, TargetNotFound, else InEffect.
func OracleVerdicts(res *kuadrantoracle.Result) map[string]Verdict {
	out := map[string]Verdict{}
	for _, p := range res.Policies {
		key := p.Kind + " " + p.Namespace + "/" + p.Name
		a := p.Condition("Accepted")
		switch {
		case a != nil && a.Status != "True" && a.Reason == "TargetNotFound":
			out[key] = NotFound
		case a != nil && a.Status != "True" && a.Reason == "Conflicted":
			out[key] = Conflicted
		case a != nil && a.Status != "True":
			out[key] = Verdict("NotAccepted:" + a.Reason)
		case directKinds[p.Kind]:
			out[key] = InEffect
		default:
			e := p.Condition("Enforced")
			switch {
			case e != nil && e.Reason == "Overridden":
				out[key] = Overridden
			case e != nil && e.Reason == "Unknown" && strings.Contains(e.Message, "not in the path to any existing routes"):
				out[key] = NoRoutes
			default:
				out[key] = InEffect
			}
		}
	}
	return out
}

// OurVerdicts reads the same standing from the engine's sources: for the data-plane kinds, over
// the route targets only (Kuadrant's Enforced looks at paths to route rules, never at the Gateway
// as a whole); for DNSPolicy and TLSPolicy over every target. policies lists every Kuadrant
// policy of the input ("Kind namespace/name"), so that one the engine shows nowhere is NotFound
// (DNSPolicy, TLSPolicy) or NoRoutes.
func OurVerdicts(outs map[compute.Key]runtime.Object, policies []string) map[string]Verdict {
	outcomes := map[string][]v1alpha1.Outcome{}
	for _, o := range outs {
		ep, ok := o.(*v1alpha1.EffectivePolicy)
		if !ok {
			continue
		}
		for _, t := range ep.Targets {
			route := t.Kind == "HTTPRoute" || t.Kind == "GRPCRoute"
			for _, tp := range t.Policies {
				if tp.Group != "kuadrant.io" || (!route && !directKinds[tp.Kind]) {
					continue
				}
				for _, s := range tp.Sources {
					key := fmt.Sprintf("%s %s/%s", tp.Kind, s.Namespace, s.Name)
					outcomes[key] = append(outcomes[key], s.Outcome)
				}
			}
		}
	}
	out := map[string]Verdict{}
	for _, key := range policies {
		var kind string
		_, _ = fmt.Sscanf(key, "%s", &kind)
		os := outcomes[key]
		switch {
		case len(os) == 0 && directKinds[kind]:
			out[key] = NotFound
		case len(os) == 0:
			out[key] = NoRoutes
		case all(os, v1alpha1.OutcomeConflicted):
			out[key] = Conflicted
		case all(os, v1alpha1.OutcomeOverridden):
			out[key] = Overridden
		default:
			out[key] = InEffect
		}
	}
	return out
}

func all(os []v1alpha1.Outcome, want v1alpha1.Outcome) bool {
	for _, o := range os {
		if o != want {
			return false
		}
	}
	return true
}

// CompareVerdicts lists the policies whose standing differs.
func CompareVerdicts(oracle, ours map[string]Verdict) []string {
	var out []string
	for key, o := range oracle {
		if u := ours[key]; u != o {
			out = append(out, fmt.Sprintf("%s: Kuadrant %s, ours %s", key, o, u))
		}
	}
	sort.Strings(out)
	return out
}

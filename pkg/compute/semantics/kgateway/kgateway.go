package kgateway

// The kgateway profile (v2.2: the policy kinds of gateway.kgateway.dev, see descriptors.go),
// from github.com/kgateway-dev/kgateway/v2 v2.2.0:
//
//   - pkg/krtcollections/policy.go getTargetingPoliciesMaybeForBackends: the policies on one
//     target in order, the heavier first (annotation kgateway.dev/policy-weight, read for
//     TrafficPolicy only: trafficpolicy/traffic_policy_plugin.go), then the older;
//   - pkg/pluginsdk/policy/merge.go MergePolicies: a level's policies merged in that order, then
//     the levels, the more specific first, each with MergeOptions AugmentedShallow (a field
//     already set is kept) unless a delegating parent route's kgateway.dev/inherited-policy-priority
//     says otherwise (GetMergeStrategy; only across a delegation chain, see fold.go);
//   - the merge functions, one per field of the policy's IR (trafficpolicy/merge.go,
//     listenerpolicy/merge.go and merge_http.go): fold.go's merge units;
//   - backendconfigpolicy/plugin.go processBackend: no merge, every policy of a backend
//     applied in the order above, each setting the cluster fields it has;
//   - where each kind takes effect: reach.go.

import (
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// Profile is the kgateway profile.
type Profile struct{}

// Name implements semantics.Profile.
func (Profile) Name() string { return semantics.Kgateway }

// MergeSchema (semantics.Profile): each of kind's merge units is an object merged whole.
func (Profile) MergeSchema(kind string, s *apiextv1.JSONSchemaProps, _ string) *merge.Schema {
	m := merge.Compile(s)
	for _, p := range mergeUnits[kind] {
		m = merge.WithPath(m, semantics.PathParts(p), func(n *merge.Schema) { n.Atomic = true })
	}
	if kind == "ListenerPolicy" {
		m = merge.WithPath(m, []string{"perPort"}, func(n *merge.Schema) { n.MapKeys = []string{"port"} })
	}
	return m
}

// ReportedStrategy (semantics.Profile): kgateway's own merge, field by field.
func (Profile) ReportedStrategy(string, *semantics.Entry) v1alpha1.MergeStrategy {
	return v1alpha1.MergeCustom
}

// Flavor implements semantics.Profile.
func (Profile) Flavor(string, topology.NodeID) string { return "" }

// kindRules are the words of Rule for each kind.
var kindRules = map[string]string{
	"TrafficPolicy": "each feature from the most specific policy that sets it (route rule, route, listener, Gateway; " +
		"at one level the heavier kgateway.dev/policy-weight, then the older); a Gateway's or listener's timeouts, " +
		"urlRewrite and autoHostRewrite never apply; a route that a rule delegates to comes before the delegating route " +
		"unless that route's kgateway.dev/inherited-policy-priority prefers the parent",
	"ListenerPolicy":      "each listener setting from the oldest policy of the Gateway that sets it",
	"HTTPListenerPolicy":  "each HTTP listener setting from the oldest policy of the Gateway that sets it",
	"BackendConfigPolicy": "the policies of a backend applied oldest first, so each setting from the newest policy that sets it",
}

// Rule implements semantics.Profile.
func (Profile) Rule(kind string) string {
	if w, ok := kindRules[kind]; ok {
		return "kgateway: " + w
	}
	return "kgateway: each field from the most specific, then oldest, policy that sets it"
}

// Direct (semantics.Profile): every kgateway kind is described as Inherited; a descriptor of
// one's own that names the profile for a Direct kind gets the oldest policy.
func (Profile) Direct(cands []*semantics.Policy) []*semantics.Policy { return cands[:1] }

// UnnamedRuleSections (semantics.Profile): kgateway attaches policies to named rules only
// (krtcollections/policy.go transformRules looks them up by r.Name).
func (Profile) UnnamedRuleSections() bool { return false }

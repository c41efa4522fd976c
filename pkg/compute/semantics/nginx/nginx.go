package nginx

// The NGINX Gateway Fabric profile (v2.6: ClientSettingsPolicy, UpstreamSettingsPolicy,
// ObservabilityPolicy), from github.com/nginx/nginx-gateway-fabric v2.6.7:
//
//   - internal/controller/state/graph/policies.go markConflictedPolicies: per target, the valid
//     policies in order (ngfsort.LessClientObject: older first, then namespace, then name); a
//     later one whose fields overlap an earlier still-valid one is Conflicted, whole: Valid is
//     a property of the policy, so it is then dropped from every target (rejections).
//   - internal/controller/state/dataplane/configuration.go buildPolicies: every policy that is
//     not Conflicted goes into the configuration of its target (Gateway policies into each
//     server, route policies into the route's locations, Service policies into the upstream),
//     so policies on one target add up.
//   - internal/controller/nginx/config/policies/*/validator.go Conflicts: which fields overlap
//     (nginxConflictFields).
//   - ClientSettingsPolicy is inherited: a route's location directives beat the server's
//     (Gateway) ones, and it is never applied to an upstream (Service).
//   - keepAlive.timeout of a ClientSettingsPolicy is one directive (keepalive_timeout server
//     [header]): a policy that sets it sets it whole.

import (
	"sort"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics/gep"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// Profile is the NGINX Gateway Fabric profile.
type Profile struct{}

// nginxConflictFields are the fields (in the spec proper) two policies of a kind on one target
// must not both set, from each kind's validator Conflicts.
var nginxConflictFields = map[string][]string{
	"ClientSettingsPolicy":   {"body.maxSize", "body.timeout", "keepAlive.requests", "keepAlive.time", "keepAlive.minTimeout", "keepAlive.timeout"},
	"UpstreamSettingsPolicy": {"zoneSize", "keepAlive.connections", "keepAlive.requests", "keepAlive.time", "keepAlive.timeout", "loadBalancingMethod", "hashMethodKey"},
	"ObservabilityPolicy":    {"tracing"},
}

// Name implements semantics.Profile.
func (Profile) Name() string { return semantics.NGINXGatewayFabric }

// MergeSchema implements semantics.Profile.
func (Profile) MergeSchema(kind string, s *apiextv1.JSONSchemaProps, _ string) *merge.Schema {
	m := merge.Compile(s)
	if kind == "ClientSettingsPolicy" {
		m = merge.WithPath(m, []string{"keepAlive", "timeout"}, func(n *merge.Schema) { n.Atomic = true })
	}
	return m
}

// ReportedStrategy implements semantics.Profile.
func (Profile) ReportedStrategy(_ string, e *semantics.Entry) v1alpha1.MergeStrategy {
	return e.Strategy
}

// Flavor implements semantics.Profile.
func (Profile) Flavor(string, topology.NodeID) string { return "" }

// Reaches (semantics.Profile): a ClientSettingsPolicy configures the NGINX server (Gateway) and locations
// (routes), never an upstream.
func (Profile) Reaches(kind string, target topology.NodeID) bool {
	if kind != "ClientSettingsPolicy" {
		return true
	}
	return target.Group == topology.GatewayGroup && (target.Kind == "Gateway" || topology.IsRouteGK(target.GK()))
}

// LimitsReach implements semantics.ReachLimiter.
func (Profile) LimitsReach(kind string) bool { return kind == "ClientSettingsPolicy" }

// Rule implements semantics.Profile.
func (Profile) Rule(kind string) string {
	if kind == "ClientSettingsPolicy" {
		return "NGINX Gateway Fabric: route settings beat Gateway settings, never applied to backends; policies on one target add up unless a newer one overlaps an older one (Conflicted)"
	}
	return "NGINX Gateway Fabric: policies on one target add up unless a newer one overlaps an older one (Conflicted)"
}

// Direct (semantics.Profile): every policy on the target applies but those rejected (rejections).
func (Profile) Direct(cands []*semantics.Policy) []*semantics.Policy {
	var out []*semantics.Policy
	for _, c := range cands {
		if c.RejectedBy == nil {
			out = append(out, c)
		}
	}
	return out
}

// Fold (semantics.Profile): on each node the policies not rejected add up; then docs/spec.md §5.4 over those (a
// ClientSettingsPolicy names no strategy: PatchDefaults, route fields over Gateway fields).
func (Profile) Fold(es []semantics.FoldEntry, _ string) semantics.FoldValue {
	var live []int
	var conflicts []*semantics.Policy
	for i := range es {
		if by := es[i].Policy.RejectedBy; by != nil {
			if conflicts == nil {
				conflicts = make([]*semantics.Policy, len(es))
			}
			conflicts[i] = by
			continue
		}
		live = append(live, i)
	}
	if len(live) == 0 {
		return semantics.FoldValue{ConflictedBy: conflicts} // every entry rejected: nothing applies
	}
	return semantics.FoldValue{Acc: gep.FoldOf(es, live), ConflictedBy: conflicts}
}

// Rejections is markConflictedPolicies: per target, the policies established first; one that
// overlaps an earlier one still valid is rejected, on every target. NGF walks the targets in
// Go map order, so where rejections chain across targets (A beats B on one, B would beat C on
// another) its answer can differ from run to run; here targets go in node order, so the
// answer is the same every time and is one of the answers NGF can give.
func (Profile) Rejections(kind string, at map[topology.NodeID][]*semantics.Policy) map[*semantics.Policy]*semantics.Policy {
	nodes := make([]topology.NodeID, 0, len(at))
	for n, ps := range at {
		if len(ps) > 1 {
			nodes = append(nodes, n)
		}
	}
	sort.Slice(nodes, func(i, j int) bool { return topology.LessNode(nodes[i], nodes[j]) })
	out := map[*semantics.Policy]*semantics.Policy{}
	for _, n := range nodes {
		ps := append([]*semantics.Policy(nil), at[n]...)
		sort.Slice(ps, func(i, j int) bool { return semantics.EstablishedBefore(ps[i], ps[j]) })
		for i, a := range ps {
			if out[a] != nil {
				continue
			}
			for _, b := range ps[i+1:] {
				if out[b] == nil && nginxOverlap(kind, a, b) {
					out[b] = a
				}
			}
		}
	}
	return out
}

// nginxOverlap reports whether a and b both set a field of kind's Conflicts.
func nginxOverlap(kind string, a, b *semantics.Policy) bool {
	if len(a.Entries) == 0 || len(b.Entries) == 0 {
		return false
	}
	for _, f := range nginxConflictFields[kind] {
		if isSet(a.Entries[0].Spec, f) && isSet(b.Entries[0].Spec, f) {
			return true
		}
	}
	return false
}

func isSet(spec map[string]interface{}, path string) bool {
	v, ok := semantics.Lookup(spec, path)
	return ok && v != nil
}

// UnnamedRuleSections implements semantics.Profile.
func (Profile) UnnamedRuleSections() bool { return false }

package compute

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
)

type nginxProfile struct{}

// nginxConflictFields are the fields (in the spec proper) two policies of a kind on one target
// must not both set, from each kind's validator Conflicts.
var nginxConflictFields = map[string][]string{
	"ClientSettingsPolicy":   {"body.maxSize", "body.timeout", "keepAlive.requests", "keepAlive.time", "keepAlive.minTimeout", "keepAlive.timeout"},
	"UpstreamSettingsPolicy": {"zoneSize", "keepAlive.connections", "keepAlive.requests", "keepAlive.time", "keepAlive.timeout", "loadBalancingMethod", "hashMethodKey"},
	"ObservabilityPolicy":    {"tracing"},
}

func (nginxProfile) name() string { return SemanticsNGINXGatewayFabric }

func (nginxProfile) mergeSchema(kind string, s *apiextv1.JSONSchemaProps, _ string) *merge.Schema {
	m := merge.Compile(s)
	if kind == "ClientSettingsPolicy" {
		m = merge.WithPath(m, []string{"keepAlive", "timeout"}, func(n *merge.Schema) { n.Atomic = true })
	}
	return m
}

func (nginxProfile) reportedStrategy(e *entry) v1alpha1.MergeStrategy { return e.strategy }

func (nginxProfile) flavor(string, nodeID) string { return "" }

// reaches: a ClientSettingsPolicy configures the NGINX server (Gateway) and locations
// (routes), never an upstream.
func (nginxProfile) reaches(kind string, target nodeID) bool {
	if kind != "ClientSettingsPolicy" {
		return true
	}
	return target.Group == gwGroup && (target.Kind == "Gateway" || isRouteGK(target.gk()))
}

func (nginxProfile) limitsReach(kind string) bool { return kind == "ClientSettingsPolicy" }

func (nginxProfile) rule(kind string) string {
	if kind == "ClientSettingsPolicy" {
		return "NGINX Gateway Fabric: route settings beat Gateway settings, never applied to backends; policies on one target add up unless a newer one overlaps an older one (Conflicted)"
	}
	return "NGINX Gateway Fabric: policies on one target add up unless a newer one overlaps an older one (Conflicted)"
}

// direct: every policy on the target applies but those rejected (rejections).
func (nginxProfile) direct(cands []*policy) []*policy {
	var out []*policy
	for _, c := range cands {
		if c.rejectedBy == nil {
			out = append(out, c)
		}
	}
	return out
}

// fold: on each node the policies not rejected add up; then SPEC §5.4 over those (a
// ClientSettingsPolicy names no strategy: PatchDefaults, route fields over Gateway fields).
func (nginxProfile) fold(es []foldEntry, _ string) foldValue {
	var live []int
	var conflicts []*policy
	for i := range es {
		if by := es[i].pol.rejectedBy; by != nil {
			if conflicts == nil {
				conflicts = make([]*policy, len(es))
			}
			conflicts[i] = by
			continue
		}
		live = append(live, i)
	}
	if len(live) == 0 {
		return foldValue{conflictedBy: conflicts} // every entry rejected: nothing applies
	}
	return foldValue{acc: gepFoldOf(es, live), conflictedBy: conflicts}
}

// rejections is markConflictedPolicies: per target, the policies established first; one that
// overlaps an earlier one still valid is rejected, on every target. NGF walks the targets in
// Go map order, so where rejections chain across targets (A beats B on one, B would beat C on
// another) its answer can differ from run to run; here targets go in node order, so the
// answer is the same every time and is one of the answers NGF can give.
func (nginxProfile) rejections(kind string, at map[nodeID][]*policy) map[*policy]*policy {
	nodes := make([]nodeID, 0, len(at))
	for n, ps := range at {
		if len(ps) > 1 {
			nodes = append(nodes, n)
		}
	}
	sort.Slice(nodes, func(i, j int) bool { return lessNode(nodes[i], nodes[j]) })
	out := map[*policy]*policy{}
	for _, n := range nodes {
		ps := append([]*policy(nil), at[n]...)
		sort.Slice(ps, func(i, j int) bool { return establishedBefore(ps[i], ps[j]) })
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
func nginxOverlap(kind string, a, b *policy) bool {
	if len(a.entries) == 0 || len(b.entries) == 0 {
		return false
	}
	for _, f := range nginxConflictFields[kind] {
		if isSet(a.entries[0].spec, f) && isSet(b.entries[0].spec, f) {
			return true
		}
	}
	return false
}

func isSet(spec map[string]interface{}, path string) bool {
	v, ok := lookup(spec, path)
	return ok && v != nil
}

func (nginxProfile) unnamedRuleSections() bool { return false }

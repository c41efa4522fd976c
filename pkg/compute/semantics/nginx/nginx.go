package nginx

// The NGINX Gateway Fabric profile (v2.6: every policy kind of gateway.nginx.org, see
// descriptors.go), from github.com/nginx/nginx-gateway-fabric v2.6.7:
//
//   - internal/controller/state/graph/policies.go markConflictedPolicies: per target, the valid
//     policies in order (ngfsort.LessClientObject: older first, then namespace, then name); a
//     later one whose fields overlap an earlier still-valid one is Conflicted, whole: Valid is
//     a property of the policy, so it is then dropped from every target (rejections).
//   - internal/controller/nginx/config/policies/*/validator.go Conflicts: which fields overlap
//     (nginxConflictFields); SnippetsPolicy and WAFPolicy never conflict.
//   - internal/controller/state/dataplane/configuration.go buildPolicies: every policy that is
//     not Conflicted goes into the configuration of its target, so policies on one target add
//     up (fold.go), and NGINX inherits their directives into the blocks below (fold.go).
//   - internal/controller/nginx/config/policies/*/generator.go: which fields make one directive
//     (nginxDirectiveObjects): a policy that sets one of them sets the whole directive.
//   - where each kind takes effect: reach.go.

import (
	"sort"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
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
	"ProxySettingsPolicy": {
		"buffering.disable", "buffering.bufferSize", "buffering.buffers", "buffering.busyBuffersSize",
		"timeout.connect", "timeout.read", "timeout.send",
	},
	"RateLimitPolicy": {"rateLimit.dryRun", "rateLimit.logLevel", "rateLimit.rejectCode"},
}

// nginxDirectiveObjects are the objects (in the spec proper) each of which NGINX Gateway Fabric
// writes as one directive: keepalive_timeout <server> [<header>] (clientsettings/generator.go),
// proxy_buffers <number> <size> (proxysettings/generator.go), app_protect_policy_file of the
// bundle the source names (waf/generator.go). A policy that sets one replaces it whole.
var nginxDirectiveObjects = map[string][]string{
	"ClientSettingsPolicy": {"keepAlive.timeout"},
	"ProxySettingsPolicy":  {"buffering.buffers"},
	"WAFPolicy":            {"policySource"},
}

// nginxListKeys are the list-maps of NGINX Gateway Fabric's API types (+listType=map), kept here
// so that a policy merges alike whether or not its CRD's schema is known:
// apis/v1alpha2/observabilitypolicy_types.go spanAttributes, keyed by key.
var nginxListKeys = map[string]map[string][]string{
	"ObservabilityPolicy": {"tracing.spanAttributes": {"key"}},
}

// Name implements semantics.Profile.
func (Profile) Name() string { return semantics.NGINXGatewayFabric }

// MergeSchema implements semantics.Profile.
func (Profile) MergeSchema(kind string, s *apiextv1.JSONSchemaProps, _ string) *merge.Schema {
	m := merge.Compile(s)
	for _, p := range nginxDirectiveObjects[kind] {
		m = merge.WithPath(m, semantics.PathParts(p), func(n *merge.Schema) { n.Atomic = true })
	}
	for p, keys := range nginxListKeys[kind] {
		m = merge.WithPath(m, semantics.PathParts(p), func(n *merge.Schema) { n.MapKeys = keys })
	}
	for _, p := range kindInheritance[kind].appended {
		m = merge.WithPath(m, semantics.PathParts(p), func(n *merge.Schema) { n.MapKeys = []string{noItemKey} })
	}
	return m
}

// ReportedStrategy implements semantics.Profile.
func (Profile) ReportedStrategy(_ string, e *semantics.Entry) v1alpha1.MergeStrategy {
	return e.Strategy
}

// Flavor implements semantics.Profile.
func (Profile) Flavor(string, topology.NodeID) string { return "" }

// kindRules are the words of Rule for each kind.
var kindRules = map[string]string{
	"ClientSettingsPolicy":   "route settings beat Gateway settings directive by directive, never applied to backends",
	"ProxySettingsPolicy":    "route settings beat Gateway settings directive by directive, never applied to backends",
	"WAFPolicy":              "a route's WAF bundle and security logs beat the Gateway's, never applied to backends",
	"RateLimitPolicy":        "a route with rate limit rules of its own inherits none of the Gateway's, other settings directive by directive; never applied to backends",
	"SnippetsPolicy":         "every snippet of the Gateway's policies is injected, for its routes too",
	"ObservabilityPolicy":    "applied to the routes it targets",
	"UpstreamSettingsPolicy": "applied to the Services it targets",
}

// Rule implements semantics.Profile.
func (Profile) Rule(kind string) string {
	r := "NGINX Gateway Fabric: "
	if w, ok := kindRules[kind]; ok {
		r += w + "; "
	}
	return r + "policies on one target add up unless a newer one overlaps an older one (Conflicted)"
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

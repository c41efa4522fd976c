package istio

// The Istio profile, from istio.io/istio release-1.31 (v0.0.0-20260827124520-eed52ebb66ad):
//
//   - pilot/pkg/model/policyattachment.go ShouldAttachPolicy: a Gateway API gateway (its pods
//     carry gateway.networking.k8s.io/gateway-name) takes a policy whose targetRefs name it in
//     the policy's namespace; a policy without targetRefs falls back to its selector, and an
//     absent selector selects every workload of the namespace
//     (ENABLE_SELECTOR_BASED_K8S_GATEWAY_POLICY, on by default). A waypoint never uses a
//     selector: it takes policies whose targetRefs name a Service (in the Service's namespace)
//     it serves, the waypoint's Gateway, or (from the root namespace) the GatewayClass
//     istio-waypoint.
//   - The lookup namespaces of each kind are the root namespace and the workload's
//     (authorization.go ListAuthorizationPolicies: root first), so a root namespace policy
//     without a target applies to every workload of the mesh.
//
// The hierarchy has no node for a waypoint: a Service stands for the waypoint serving it, and
// takes only the policies that target that Service. A Gateway is taken for an Istio gateway,
// not a waypoint, so a policy on a GatewayClass (which Istio applies only to waypoints, from
// the root namespace, on istio-waypoint) reaches nothing here. meshConfig's rootNamespace is
// not read: it is istio-system.

import (
	"fmt"
	"sort"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// Profile is the Istio profile.
type Profile struct{}

// RootNamespace is Istio's default meshConfig rootNamespace.
const RootNamespace = "istio-system"

// Flavors: a Gateway, or the waypoint of one Service (the flavor names the Service, whose own
// policies alone apply).
const (
	flavorGateway  = "gateway"
	flavorWaypoint = "waypoint:"
)

// Name implements semantics.Profile.
func (Profile) Name() string { return semantics.Istio }

// RootNamespace implements semantics.MeshRoot.
func (Profile) RootNamespace(string) string { return RootNamespace }

// MergeSchema implements semantics.Profile: specs apply whole, nothing merges.
func (Profile) MergeSchema(string, *apiextv1.JSONSchemaProps, string) *merge.Schema { return nil }

// ReportedStrategy implements semantics.Profile: every policy applies, in Istio's order.
func (Profile) ReportedStrategy(string, *semantics.Entry) v1alpha1.MergeStrategy {
	return v1alpha1.MergeCustom
}

// Flavor implements semantics.Profile.
func (Profile) Flavor(_ string, target topology.NodeID) string {
	switch {
	case isGateway(target):
		return flavorGateway
	case isService(target):
		return flavorWaypoint + target.Namespace + "/" + target.Name
	}
	return ""
}

// Reaches implements semantics.Profile: Gateways, and Services for their waypoints (not for
// EnvoyFilter, which Istio matches without the waypoint's Services).
func (Profile) Reaches(kind string, target topology.NodeID) bool {
	return target.Section == "" && (isGateway(target) || isService(target) && !kinds[kind].gatewaysOnly)
}

// LimitsReach implements semantics.ReachLimiter.
func (Profile) LimitsReach(string) bool { return true }

// ReachesFrom implements semantics.ReachFrom: a Gateway takes the policies of its namespace
// (and the root namespace) and its own; a Service (its waypoint) only its own.
func (Profile) ReachesFrom(_ string, at, target topology.NodeID) bool {
	if isGateway(target) && topology.IsNamespaceNode(at) {
		return true
	}
	return at == target
}

// UnnamedRuleSections implements semantics.Profile.
func (Profile) UnnamedRuleSections() bool { return false }

// Direct implements semantics.Profile (no Istio kind is Direct).
func (Profile) Direct(cands []*semantics.Policy) []*semantics.Policy { return cands[:1] }

// Rule implements semantics.Profile.
func (Profile) Rule(kind string) string {
	if r, ok := kinds[kind]; ok {
		return r.rule
	}
	return ""
}

// Fold implements semantics.Profile: the entries Istio applies at the target, in its order,
// each one element of the list, the others apart; Telemetry, whose policies override one
// another, is merged as Istio merges it (telemetry.go).
func (Profile) Fold(es []semantics.FoldEntry, flavor string) semantics.FoldValue {
	fv := semantics.FoldValue{Totals: make([]int, len(es)), Apart: make([]bool, len(es))}
	if len(es) == 0 {
		return fv
	}
	r, ok := kinds[es[0].Policy.ID.GK.Kind]
	if ok && r.fold != nil {
		return r.fold(es, flavor)
	}
	var idx []int
	seen := map[*semantics.Policy]bool{}
	for i := range es {
		if !ok || seen[es[i].Policy] || !applies(es[i], flavor) {
			fv.Apart[i] = true
			continue
		}
		seen[es[i].Policy] = true
		idx = append(idx, i)
	}
	if len(idx) == 0 {
		return fv
	}
	sort.SliceStable(idx, func(a, b int) bool { return r.less(es[idx[a]].Policy, es[idx[b]].Policy) })
	specs := make([]interface{}, len(idx))
	for j, i := range idx {
		specs[j] = es[i].Entry.Spec
		fv.Totals[i] = 1
	}
	fv.Acc = merge.Ordered(specs, idx)
	return fv
}

// applies says whether Istio applies entry e at a target of flavor (ShouldAttachPolicy).
func applies(e semantics.FoldEntry, flavor string) bool {
	n := e.Node
	if flavor == flavorGateway {
		return topology.IsNamespaceNode(n) || isGateway(n)
	}
	return isService(n) && flavor == flavorWaypoint+n.Namespace+"/"+n.Name
}

func isGateway(n topology.NodeID) bool {
	return n.Group == topology.GatewayGroup && n.Kind == "Gateway" && n.Section == ""
}

func isService(n topology.NodeID) bool {
	return n.Group == "" && n.Kind == "Service" && n.Section == ""
}

// rules is what differs between the kinds: the order Istio applies their policies in and the
// rule source messages name.
type rules struct {
	less func(a, b *semantics.Policy) bool
	rule string
	// gatewaysOnly: the kind never reaches a waypoint through a Service targetRef.
	gatewaysOnly bool
	// fold, when set, folds the kind instead of the list of every policy (a kind whose
	// policies override one another).
	fold func(es []semantics.FoldEntry, flavor string) semantics.FoldValue
}

var kinds = map[string]rules{
	authorizationPolicy:   {less: authzBefore, rule: authzRule},
	requestAuthentication: {less: raBefore, rule: raRule},
	wasmPlugin:            {less: extensionBefore, rule: fmt.Sprintf(extensionRule, wasmPlugin)},
	trafficExtension:      {less: extensionBefore, rule: fmt.Sprintf(extensionRule, trafficExtension)},
	envoyFilter:           {less: envoyFilterBefore, rule: envoyFilterRule, gatewaysOnly: true},
	telemetryKind:         {rule: telemetryRule, fold: telemetryFold},
}

// rootFirst orders policies of the root namespace before the others (0 when it does not
// decide).
func rootFirst(a, b *semantics.Policy) int {
	ra, rb := a.ID.Namespace == RootNamespace, b.ID.Namespace == RootNamespace
	switch {
	case ra == rb:
		return 0
	case ra:
		return -1
	}
	return 1
}

// createdBefore is Istio's configCompareByCreationTime (pilot/pkg/model/config.go): creationTimestamp,
// then name, then namespace.
func createdBefore(a, b *semantics.Policy) bool {
	if !a.Created.Equal(b.Created) {
		return a.Created.Before(b.Created)
	}
	if a.ID.Name != b.ID.Name {
		return a.ID.Name < b.ID.Name
	}
	return a.ID.Namespace < b.ID.Namespace
}

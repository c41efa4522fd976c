package semantics

// Semantics profiles (docs/spec.md §4.1): a policy kind belongs to an implementation, and where that
// implementation's rules differ from the generic GEP fold, its rules decide what the
// EffectivePolicy says. Everything a profile decides goes through the Profile interface below.

import (
	"slices"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// Semantics names, as descriptors write them.
const (
	GEP                = "GEP"
	GatewayAPI         = "GatewayAPI"
	EnvoyGateway       = "EnvoyGateway"
	Kuadrant           = "Kuadrant"
	NGINXGatewayFabric = "NGINXGatewayFabric"
	Istio              = "Istio"
	Kgateway           = "kgateway"
)

// FoldEntry is one entry of a context: a stanza of a policy attached at a node of the via,
// level the node's place in the hierarchy.
type FoldEntry struct {
	Policy *Policy
	Entry  *Entry
	Node   topology.NodeID
	Level  int
	// NodeAnnotations are the annotations the engine keeps of Node's object when it is a
	// route (topology.RouteAnnotations).
	NodeAnnotations map[string]string
}

// Profile is what one implementation enforces.
type Profile interface {
	// Name is the profile's semantics name.
	Name() string
	// Descriptors are the built-in descriptors of the policy kinds of the implementation's API
	// group at the version the profile describes (each naming the profile).
	Descriptors() []Descriptor
	// MergeSchema compiles what merging needs of the schema of a stanza of policy kind kind
	// (s may be nil), for an entry that names strategy named (lower case, "" for none):
	// which lists merge item by item on which keys, which objects are replaced whole.
	MergeSchema(kind string, s *apiextv1.JSONSchemaProps, named string) *merge.Schema
	// ReportedStrategy is the mergeStrategy a source entry of policy kind kind reports.
	ReportedStrategy(kind string, e *Entry) v1alpha1.MergeStrategy
	// Flavor tells apart targets whose contexts the profile folds differently although they
	// traverse the same policy-bearing nodes; "" when the profile never does. It is part of
	// the memo key of a fold.
	Flavor(kind string, target topology.NodeID) string
	// Fold merges the entries of one context of an Inherited kind, established first
	// (docs/spec.md §5.2), for targets of the given flavor.
	Fold(es []FoldEntry, flavor string) FoldValue
	// Direct picks, among the policies of a Direct kind attached to one target or section
	// (established first, never empty), those that take effect; every other one is
	// Conflicted (beaten by its RejectedBy when set, else by the first winner). The winners'
	// specs are merged in order; there may be none when every candidate was rejected.
	Direct(cands []*Policy) []*Policy
	// Reaches says whether policies of kind kind can take effect at target at all.
	Reaches(kind string, target topology.NodeID) bool
	// UnnamedRuleSections says whether a sectionName rule-<index+1> addresses a route's
	// unnamed rule (Gateway API addresses rules by name only).
	UnnamedRuleSections() bool
	// Rule names the implementation's rule for source messages ("" for GEP).
	Rule(kind string) string
}

// ReachLimiter is implemented by a profile whose Reaches is false somewhere for kind: the
// engine then lists only the keys where it is true (a kind that reaches nothing of an object
// gives it no output).
type ReachLimiter interface {
	LimitsReach(kind string) bool
}

// MeshRoot is implemented by a profile whose policies without a target in one namespace apply
// to the whole mesh (Istio's root namespace): that namespace's node is then the least specific
// node of every path of the kind, ahead of everything else.
type MeshRoot interface {
	// RootNamespace is the mesh-wide namespace of policy kind kind, "" when it has none.
	RootNamespace(kind string) string
}

// RootNamespaceOf is p's root namespace for kind, "" when p has none.
func RootNamespaceOf(p Profile, kind string) string {
	if mr, ok := p.(MeshRoot); ok {
		return mr.RootNamespace(kind)
	}
	return ""
}

// ReachFrom is implemented by a ReachLimiter whose kind reaches a target from some attachment
// points only (Istio: a namespace-wide policy reaches the namespace's Gateways, not the
// waypoint of a Service): the engine lists a target below an attachment at only when
// ReachesFrom holds, so that every key it lists has an output.
type ReachFrom interface {
	ReachesFrom(kind string, at, target topology.NodeID) bool
}

// ListenerReach is implemented by a profile whose Direct kind takes effect on a Gateway's
// listener only when the listener declares what the kind needs (Kuadrant writes no DNSRecord
// for a listener without a hostname). Where a Gateway has a listener ReachesListener refuses,
// the engine gives the kind no entry on that listener: the Gateway's own policies get an entry
// per listener they take effect on instead of one for the whole Gateway, and a policy on a
// refused listener none (docs/spec.md §4.1). The profile limits the kind's reach too
// (ReachLimiter), so that the engine lists only Gateways with output.
type ListenerReach interface {
	// ReachesListener says whether policies of kind kind take effect on listener l of Gateway gateway.
	ReachesListener(kind string, gateway topology.NodeID, l topology.Listener) bool
}

// RefusedListeners are the names of the listeners of Gateway gw where p's kind kind does not
// take effect (ListenerReach), nil when p refuses none or gw is not a Gateway.
func RefusedListeners(p Profile, kind string, gw *topology.Gateway) map[string]bool {
	lr, ok := p.(ListenerReach)
	if !ok || gw == nil {
		return nil
	}
	var out map[string]bool
	for _, l := range gw.Listeners {
		if !lr.ReachesListener(kind, gw.ID, l) {
			if out == nil {
				out = map[string]bool{}
			}
			out[l.Name] = true
		}
	}
	return out
}

// RuleContexts is implemented by a profile that computes an Inherited kind's effective policy
// per route rule only, never for a route as a whole (Kuadrant: every path it folds ends at a
// route rule). Where every rule of a route bears a policy of the kind of its own, no request
// falls into the whole route's context, so the engine gives the route no whole-route entry of
// the kind and its rule entries stand alone (docs/spec.md §4.1). A route with a rule that bears
// none keeps it: that rule's context is the whole route's.
type RuleContexts interface {
	// RuleContextsOnly says whether kind kind's effective policies are per route rule only.
	RuleContextsOnly(kind string) bool
}

// RulesCover says whether route r has no whole-route context of p's Inherited kind kind: p
// computes the kind per rule only (RuleContexts), r has rules, and each is one of sections,
// the sections of r that bear a policy of the kind.
func RulesCover(p Profile, kind string, r *topology.Route, sections []string) bool {
	rc, ok := p.(RuleContexts)
	if !ok || r == nil || len(r.Rules) == 0 || len(sections) == 0 || !rc.RuleContextsOnly(kind) {
		return false
	}
	for _, ru := range r.Rules {
		if !slices.Contains(sections, ru.Section) {
			return false
		}
	}
	return true
}

// FoldValue is a profile's fold of one context.
type FoldValue struct {
	// Acc is the merged spec; each leaf names the index of the entry that set it.
	Acc *merge.Value
	// Totals, when set, is the number of leaves of each entry as the profile built it (an
	// entry a profile builds with another schema than at parse time has other leaves); nil
	// means each entry's parsed count.
	Totals []int
	// ConflictedBy, when set, names for each entry the policy that beat it whole under a
	// same-target rule (on this target or, for a whole-policy rule, on another), or nil.
	ConflictedBy []*Policy
	// Apart, when set, marks the entries the implementation does not apply at targets of
	// this flavor at all (Istio applies no namespace-wide policy at a waypoint): they are
	// not sources of the context. A context whose entries are all apart has no effective
	// entry.
	Apart []bool
}

// WholePolicyRejecter is implemented by a profile whose same-target rule rejects a policy
// everywhere once it loses on one target (NGINX Gateway Fabric's Valid is a property of the
// whole policy). The state keeps the answer in Policy.RejectedBy.
type WholePolicyRejecter interface {
	// Rejections returns, for the policies of kind kind attached at the nodes of at, the
	// policy that beat each rejected one.
	Rejections(kind string, at map[topology.NodeID][]*Policy) map[*Policy]*Policy
}

// SameTargetWinners marks, at every node of the context, every entry of a policy other than
// the node's oldest as beaten by the oldest's first entry (Envoy Gateway's rule for two
// policies on one target). It returns nil when no node has two policies.
func SameTargetWinners(es []FoldEntry) []*Policy {
	var out []*Policy
	first := map[topology.NodeID]int{}
	for i := range es {
		j, seen := first[es[i].Node]
		if !seen {
			first[es[i].Node] = i
			continue
		}
		if es[j].Policy == es[i].Policy {
			continue
		}
		if out == nil {
			out = make([]*Policy, len(es))
		}
		out[i] = es[j].Policy
	}
	return out
}

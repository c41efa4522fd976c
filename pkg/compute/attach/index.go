package attach

import (
	"iter"
	"maps"
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/policies"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// Inputs is what resolving a policy reads besides the policy itself. The
// Index only reads them; their owner (the engine's state) keeps them.
type Inputs struct {
	Graph *topology.Graph
	// Labels are the labels of the graph's objects, for label selectors.
	Labels map[topology.NodeID]map[string]string
	// Served reports whether the cluster serves a kind: a target of a kind
	// it does not serve is virtual.
	Served func(schema.GroupKind) bool
	// OnInvalid, when set, is told each time an Invalid listing is added
	// (d > 0) to or removed from owner object owner: the engine keeps the
	// output keys that show one.
	OnInvalid func(owner topology.NodeID, d int)
}

// InvalidAt is a policy listed as Invalid at a node of an owner object.
type InvalidAt struct {
	Policy *semantics.Policy
	Node   topology.NodeID
	Msg    string
}

// KindIndex holds the attachments of one policy kind. Its maps are read
// through its methods, which callers use under the lock that guards the
// Index.
type KindIndex struct {
	// Kind is the policy kind, set when the index is built.
	Kind     *policies.Kind
	at       map[topology.NodeID][]*semantics.Policy // valid attachments by node
	sections map[topology.NodeID]map[string]int      // object -> sections with attachments
	invalid  map[topology.NodeID][]InvalidAt         // owner object -> Invalid listings
	// gen is the attachment generation of each node bearing a policy of
	// this kind: a new value of Index.gen whenever a policy of the kind
	// is attached there or detached. Memoised folds and orders check it.
	gen map[topology.NodeID]uint64
	// changed is the newest gen of the kind: a fold checked at that value
	// is valid without looking at its nodes.
	changed uint64
	// rejectDirty is set when an attachment of the kind changed since the
	// policies' RejectedBy were last settled (rejections.go).
	rejectDirty bool
}

func newKindIndex(pk *policies.Kind) *KindIndex {
	return &KindIndex{
		Kind:     pk,
		at:       map[topology.NodeID][]*semantics.Policy{},
		sections: map[topology.NodeID]map[string]int{},
		invalid:  map[topology.NodeID][]InvalidAt{},
		gen:      map[topology.NodeID]uint64{},
	}
}

// At returns the valid policies of the kind attached to n, in the order
// they were attached; read-only.
func (k *KindIndex) At(n topology.NodeID) []*semantics.Policy { return k.at[n] }

// Nodes yields the nodes bearing a valid attachment of the kind.
func (k *KindIndex) Nodes() iter.Seq[topology.NodeID] { return maps.Keys(k.at) }

// Gen is the attachment generation of node n (0 when it bears no policy of
// the kind).
func (k *KindIndex) Gen(n topology.NodeID) uint64 { return k.gen[n] }

// Changed is the newest attachment generation of the kind.
func (k *KindIndex) Changed() uint64 { return k.changed }

// Sections lists, sorted, the sections of object t that bear a policy of
// the kind (nil: none).
func (k *KindIndex) Sections(t topology.NodeID) []string {
	var sections []string
	for sec := range k.sections[t] {
		sections = append(sections, sec)
	}
	sort.Strings(sections)
	return sections
}

// Invalid lists the policies of the kind listed as Invalid at owner object
// t; read-only.
func (k *KindIndex) Invalid(t topology.NodeID) []InvalidAt { return k.invalid[t] }

// Index holds the parsed policies, the policy kinds with their attachments,
// and the reverse indexes that say which policies to re-resolve when the
// topology changes. It has no lock: its owner guards it with its own.
type Index struct {
	in       Inputs
	kinds    map[schema.GroupKind]*KindIndex
	policies map[semantics.PolicyID]*semantics.Policy
	byTarget map[topology.NodeID]map[*semantics.Policy]bool
	// selPolicies: policies with label selectors by namespace; anyNamespace:
	// wide selectors.
	selPolicies map[string]map[*semantics.Policy]bool
	crossNS     map[string]map[*semantics.Policy]bool
	// gen numbers attachment changes (KindIndex.gen).
	gen uint64
}

// anyNamespace keys the policies whose selectors look in every namespace (no namespace is
// named so: names are DNS labels).
const anyNamespace = "*"

// New returns an Index with no policy kind.
func New(in Inputs) *Index {
	return &Index{
		in:          in,
		kinds:       map[schema.GroupKind]*KindIndex{},
		policies:    map[semantics.PolicyID]*semantics.Policy{},
		byTarget:    map[topology.NodeID]map[*semantics.Policy]bool{},
		selPolicies: map[string]map[*semantics.Policy]bool{},
		crossNS:     map[string]map[*semantics.Policy]bool{},
	}
}

// Kind returns the index of policy kind gk, nil when gk is not a policy
// kind.
func (x *Index) Kind(gk schema.GroupKind) *KindIndex { return x.kinds[gk] }

// Kinds returns the policy kinds' indexes by group/kind; read-only.
func (x *Index) Kinds() map[schema.GroupKind]*KindIndex { return x.kinds }

// Policy returns the policy id, nil when there is none.
func (x *Index) Policy(id semantics.PolicyID) *semantics.Policy { return x.policies[id] }

// Policies returns every policy by id; read-only.
func (x *Index) Policies() map[semantics.PolicyID]*semantics.Policy { return x.policies }

// SortedKinds lists the policy kinds' indexes by group, then kind.
func (x *Index) SortedKinds() []*KindIndex {
	out := make([]*KindIndex, 0, len(x.kinds))
	for _, k := range x.kinds {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Kind.GK, out[j].Kind.GK
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		return a.Kind < b.Kind
	})
	return out
}

// Resources lists the policy kinds as the resources to watch, sorted.
func (x *Index) Resources() []schema.GroupVersionResource {
	out := make([]schema.GroupVersionResource, 0, len(x.kinds))
	for _, ki := range x.kinds {
		out = append(out, ki.Kind.GVR)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Resource != b.Resource {
			return a.Resource < b.Resource
		}
		return a.Version < b.Version
	})
	return out
}

// SetKinds replaces the policy kinds (after a CRD or descriptor change):
// every policy is detached, parsed anew by reparse for its kind (a policy
// whose kind is gone is forgotten), then resolved and attached again.
func (x *Index) SetKinds(kinds map[schema.GroupKind]*policies.Kind, reparse func(pk *policies.Kind, old *semantics.Policy) *semantics.Policy) {
	for _, p := range sortedPolicyMap(x.policies) {
		x.unapply(p)
	}
	x.kinds = make(map[schema.GroupKind]*KindIndex, len(kinds))
	for gk, pk := range kinds {
		x.kinds[gk] = newKindIndex(pk)
	}
	old := x.policies
	x.policies = map[semantics.PolicyID]*semantics.Policy{}
	for _, p := range sortedPolicyMap(old) {
		ki := x.kinds[p.ID.GK]
		if ki == nil {
			continue // the CRD is gone: forget its policies
		}
		np := reparse(ki.Kind, p)
		x.policies[np.ID] = np
	}
	for _, p := range sortedPolicyMap(x.policies) {
		p.Resolution = x.resolverFor(p).resolve(p)
		x.applyRes(p, 1)
	}
}

// touch gives node n of kind ki a new attachment generation.
func (x *Index) touch(ki *KindIndex, n topology.NodeID) {
	x.gen++
	ki.gen[n] = x.gen
	ki.changed = x.gen
}

func sortedPolicyMap(m map[semantics.PolicyID]*semantics.Policy) []*semantics.Policy {
	out := make([]*semantics.Policy, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return lessPolicyID(out[i].ID, out[j].ID) })
	return out
}

func sortedPolicies(set map[*semantics.Policy]bool) []*semantics.Policy {
	out := make([]*semantics.Policy, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return lessPolicyID(out[i].ID, out[j].ID) })
	return out
}

func lessPolicyID(a, b semantics.PolicyID) bool {
	if a.GK.Group != b.GK.Group {
		return a.GK.Group < b.GK.Group
	}
	if a.GK.Kind != b.GK.Kind {
		return a.GK.Kind < b.GK.Kind
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

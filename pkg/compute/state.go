package compute

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/setmap"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/attach"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// state is the engine's inputs and what it derives from them. It composes
// the parts — the topology graph (pkg/compute/topology), the policies and
// where they attach (pkg/compute/attach), the CRDs and descriptors — and
// keeps what ties them to the outputs: the generations the memo of
// pkg/compute/fold is checked against, and the output keys a change
// affects. Engine guards it with its lock.
type state struct {
	// bulk skips computing affected keys (ComputeAll discards them).
	bulk bool
	// gen counts mutations; structGen counts those that may change the
	// graph or the attachment points (contexts). The memo (fold.Memo)
	// keeps its contexts while structGen is unchanged.
	gen       uint64
	structGen uint64
	// kindsGen counts rebuilds of the policy kinds (CRD changes).
	kindsGen uint64
	// structural is set by a mutation that changes graph or attachments.
	structural      bool
	defaultStrategy string
	// cat: the descriptors and CRDs, and which kinds they say are served,
	// cluster-scoped and policies.
	cat crdCatalog

	// classControllers: each GatewayClass's controllerName, which says
	// how its Gateways match requests (RequestTrace).
	classControllers map[string]string
	// graph: the topology objects and the indexes of their edges, guarded
	// like the rest of state.
	graph     *topology.Graph
	objLabels map[topology.NodeID]map[string]string
	// specs holds the spec of every present topology object, encoded.
	specs        map[topology.NodeID]storedSpec
	fingerprints map[topology.NodeID]fingerprint
	fpBuf        []byte // scratch of fingerprintOf
	specBuf      []byte // scratch of encodeSpec

	byKey map[Key][]topology.NodeID // nodes per output key: usually one, so a slice

	// att: the policy kinds, the policies and where they attach.
	att *attach.Index
	// invalidKeys: the owner objects with Invalid listings, by output key
	// (the attachments' OnInvalid).
	invalidKeys map[Key]map[topology.NodeID]int
	// changedPolicies are the keys of the policies whose kind, labels or
	// attachments changed since the caller last took them (not kept in
	// bulk mode, after which the caller reads every policy).
	changedPolicies map[Key]struct{}
}

func newState(opts Options) (*state, error) {
	st := &state{
		graph: topology.NewGraph(),
		cat: crdCatalog{
			descs:   map[schema.GroupKind]Descriptor{},
			crds:    map[string]*crdInfo{},
			served:  map[schema.GroupKind]bool{},
			cluster: map[schema.GroupKind]bool{},
		},
		classControllers: map[string]string{},
		objLabels:        map[topology.NodeID]map[string]string{},
		specs:            map[topology.NodeID]storedSpec{},
		fingerprints:     map[topology.NodeID]fingerprint{},
		byKey:            map[Key][]topology.NodeID{},
		invalidKeys:      map[Key]map[topology.NodeID]int{},
		changedPolicies:  map[Key]struct{}{},
	}
	switch strings.ToLower(opts.DefaultInheritedStrategy) {
	case "", "atomic":
		st.defaultStrategy = StrategyAtomic
	case "patch":
		st.defaultStrategy = StrategyPatch
	default:
		return nil, fmt.Errorf("default inherited strategy must be Atomic or Patch, not %q", opts.DefaultInheritedStrategy)
	}
	for _, d := range BuiltinDescriptors() {
		st.cat.descs[schema.GroupKind{Group: d.Group, Kind: d.Kind}] = d
	}
	for i, d := range opts.Descriptors {
		if err := ValidateDescriptor(&d); err != nil {
			return nil, fmt.Errorf("descriptor %d: %w", i, err)
		}
		st.cat.descs[schema.GroupKind{Group: d.Group, Kind: d.Kind}] = d
	}
	st.graph.OnExists = st.keyExists
	st.att = attach.New(attach.Inputs{
		Graph: st.graph, Labels: st.objLabels, Served: st.cat.serves,
		OnInvalid: func(o topology.NodeID, d int) { setmap.AddCount(st.invalidKeys, keyOf(o), o, d) },
	})
	return st, nil
}

// ---- existence and indexes ----

// keyExists keeps byKey as nodes start and stop existing (the graph's
// OnExists).
func (st *state) keyExists(n topology.NodeID, is bool) {
	k := keyOf(n)
	if is {
		if !slices.Contains(st.byKey[k], n) {
			st.byKey[k] = append(st.byKey[k], n)
		}
		return
	}
	if l := slices.DeleteFunc(st.byKey[k], func(x topology.NodeID) bool { return x == n }); len(l) == 0 {
		delete(st.byKey, k)
	} else {
		st.byKey[k] = l
	}
}

type keySet map[Key]bool

func (ks keySet) sorted() []Key {
	out := make([]Key, 0, len(ks))
	for k := range ks {
		out = append(out, k)
	}
	SortKeys(out)
	return out
}

// SortKeys sorts keys by namespace, then name: the order of Keys, of
// every key list the engine returns, and of what its callers apply.
func SortKeys(ks []Key) {
	sort.Slice(ks, func(i, j int) bool {
		if ks[i].Namespace != ks[j].Namespace {
			return ks[i].Namespace < ks[j].Namespace
		}
		return ks[i].Name < ks[j].Name
	})
}

// addLimited adds the keys of kind ki whose profile limits where it takes effect: those of
// the nodes below its attachments that the kind reaches (from that attachment, when the
// profile says where from: semantics.ReachFrom).
func (ks keySet) addLimited(g *topology.Graph, ki *attach.KindIndex) {
	kind := ki.Kind.GK.Kind
	from, byAttachment := ki.Kind.Profile.(semantics.ReachFrom)
	var at topology.NodeID
	visit := func(n topology.NodeID) {
		if ki.Kind.Profile.Reaches(kind, n) && (!byAttachment || from.ReachesFrom(kind, at, n)) {
			ks[keyOf(n)] = true
		}
	}
	seen := topology.Visited{}
	for n := range ki.Nodes() {
		at = n
		if byAttachment {
			seen = topology.Visited{} // what a node reaches depends on the attachment
		}
		if ki.Kind.Descriptor.Class != v1alpha1.ClassInherited {
			if servesAttachment(g, ki, n) {
				visit(n)
			}
			continue
		}
		g.Descend(n, true, seen, visit)
		for _, r := range meshRoots(g, ki, n) {
			g.Descend(r, true, seen, visit)
		}
	}
}

// servesAttachment says whether a Direct kind attached at n takes effect on a listener there:
// when n is a Gateway, or one of its listeners, some of whose listeners the kind refuses
// (semantics.ListenerReach), the listener n names must be served, or for the whole Gateway any.
func servesAttachment(g *topology.Graph, ki *attach.KindIndex, n topology.NodeID) bool {
	gw := g.Gateways[n.Object()]
	refused := semantics.RefusedListeners(ki.Kind.Profile, ki.Kind.GK.Kind, gw)
	if refused == nil {
		return true
	}
	if n.Section != "" {
		return !refused[n.Section]
	}
	for _, l := range gw.Listeners {
		if !refused[l.Name] {
			return true
		}
	}
	return false
}

// keys computes the keys with output: objects reached by an inherited
// attachment (its subtree), objects a direct policy is attached to, and
// owners of Invalid listings.
func (st *state) keys() []Key {
	ks := make(keySet, len(st.byKey))
	seen := make(topology.Visited, len(st.graph.Objects))
	for _, ki := range st.att.Kinds() {
		if l, ok := ki.Kind.Profile.(semantics.ReachLimiter); ok && l.LimitsReach(ki.Kind.GK.Kind) {
			ks.addLimited(st.graph, ki)
			continue
		}
		for n := range ki.Nodes() {
			ks[keyOf(n)] = true
			if ki.Kind.Descriptor.Class == v1alpha1.ClassInherited {
				ks.addBelow(st.graph, n, seen)
				for _, r := range meshRoots(st.graph, ki, n) {
					ks.addBelow(st.graph, r, seen)
				}
			}
		}
	}
	for k := range st.invalidKeys {
		ks[k] = true
	}
	return ks.sorted()
}

// keyOf is the output key of n's object.
func keyOf(n topology.NodeID) Key { return Key{Namespace: n.Namespace, Name: n.Name} }

// targetNodes lists the objects that key names.
func (st *state) targetNodes(key Key) []topology.NodeID {
	out := append(make([]topology.NodeID, 0, len(st.byKey[key])+len(st.invalidKeys[key])), st.byKey[key]...)
	for n := range st.invalidKeys[key] {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if len(out) > 1 {
		sort.Slice(out, func(i, j int) bool { return topology.LessNode(out[i], out[j]) })
	}
	return out
}

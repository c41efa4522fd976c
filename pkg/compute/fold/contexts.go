package fold

// The contexts of a target (docs/spec.md §5.5): the distinct vias of the
// paths from a root to it, by memoised dynamic programming over parents.

import (
	"sort"
	"strings"
	"sync"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/attach"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// viaElem is one attachment point on a context path. ann are the kept annotations of a
// route node's object (a profile may read them: kgateway's inherited-policy-priority).
type viaElem struct {
	node  topology.NodeID
	level int
	ann   map[string]string
}

type via struct {
	elems []viaElem
	key   string
	refs  []v1alpha1.ObjectReference // elems as references, shared by outputs
}

type foldKey struct {
	k      *attach.KindIndex
	via    string
	flavor string // the profile's flavor of the target (semantics.Profile.Flavor)
}

type memoKey struct {
	n topology.NodeID
	k *attach.KindIndex
}

// Session is one computation's view of the graph and the shared memo: the
// memo itself is safe for concurrent use, busy (the cycle guard of
// contexts) is the session's own. A Session is used by one goroutine at a
// time, under the lock that guards the graph and the attachments.
type Session struct {
	g    *topology.Graph
	m    *Memo
	busy map[memoKey]bool
	aggs aggs // reused by targetPolicy (nothing of it outlives a call)
}

// sessionPool recycles the per-call part of a computation (cycle guard,
// source aggregation buffers) between calls.
var sessionPool = sync.Pool{New: func() any { return &Session{busy: map[memoKey]bool{}} }}

// Acquire returns a session over graph g with memo m, recycled from an
// earlier call when there is one; Release gives it back.
func Acquire(g *topology.Graph, m *Memo) *Session {
	s := sessionPool.Get().(*Session)
	s.g, s.m = g, m
	return s
}

// Release gives the session back for reuse; it must not be used after.
func (s *Session) Release() {
	s.g, s.m = nil, nil
	sessionPool.Put(s)
}

func (s *Session) bears(n topology.NodeID, k *attach.KindIndex) bool { return len(k.At(n)) > 0 }

// attached returns the valid policies of kind k attached to n, established
// first (older first, then namespace/name).
func (s *Session) attached(n topology.NodeID, k *attach.KindIndex) []*semantics.Policy {
	mk := memoKey{n, k}
	gen := k.Gen(n)
	if l, ok := s.m.sortedAt.get(mk); ok && l.gen == gen {
		return l.l
	}
	l := append([]*semantics.Policy(nil), k.At(n)...)
	sort.Slice(l, func(i, j int) bool { return semantics.EstablishedBefore(l[i], l[j]) })
	v, _ := s.m.sortedAt.put(mk, orderedAt{gen: gen, l: l}, func(old orderedAt) bool { return old.gen == gen })
	return v.l
}

func viaKeyOf(elems []viaElem) string {
	var b strings.Builder
	for _, e := range elems {
		n := e.node
		b.WriteString(n.Group)
		b.WriteByte('|')
		b.WriteString(n.Kind)
		b.WriteByte('|')
		b.WriteString(n.Namespace)
		b.WriteByte('|')
		b.WriteString(n.Name)
		b.WriteByte('|')
		b.WriteString(n.Section)
		writeAnnotations(&b, e.ann)
		b.WriteByte(';')
	}
	return b.String()
}

// writeAnnotations adds a via element's annotations to its key, so that a fold is
// memoised per annotation values too.
func writeAnnotations(b *strings.Builder, ann map[string]string) {
	if len(ann) == 0 {
		return
	}
	keys := make([]string, 0, len(ann))
	for k := range ann {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteByte('|')
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(ann[k])
	}
}

func hasNode(elems []viaElem, n topology.NodeID) bool {
	for _, e := range elems {
		if e.node == n {
			return true
		}
	}
	return false
}

// extend appends to a parent context what node n adds: its Namespace (when n
// is the first object of that namespace on the path and the Namespace bears
// a policy) and n itself (when it bears a policy).
func (s *Session) extend(base []viaElem, n topology.NodeID, k *attach.KindIndex) []viaElem {
	return s.extendAt(base, n, k, topology.LevelOf(n))
}

// extendAt is extend with n at the given level, or just below the last attachment point
// of base when that is not above it: a route that a rule delegates to (kgateway) sits
// below the rule, whatever the level of routes.
func (s *Session) extendAt(base []viaElem, n topology.NodeID, k *attach.KindIndex, level int) []viaElem {
	if len(base) > 0 && level <= base[len(base)-1].level {
		level = base[len(base)-1].level + 3 // room for n's Namespace at level-2
	}
	out := base
	copied := false
	push := func(e viaElem) {
		if !copied {
			out = append(make([]viaElem, 0, len(base)+2), base...)
			copied = true
		}
		out = append(out, e)
	}
	if n.Section == "" && n.Namespace != "" {
		nsn := topology.NamespaceNode(n.Namespace)
		if s.bears(nsn, k) && !hasNode(base, nsn) {
			push(viaElem{node: nsn, level: level - 2})
		}
	}
	if s.bears(n, k) && !hasNode(out, n) {
		push(viaElem{node: n, level: level, ann: s.routeAnnotations(n)})
	}
	return out
}

// routeAnnotations are the kept annotations of n's object when it is a route.
func (s *Session) routeAnnotations(n topology.NodeID) map[string]string {
	if !topology.IsRouteGK(n.GK()) {
		return nil
	}
	if r := s.g.Routes[n.Object()]; r != nil {
		return r.Annotations
	}
	return nil
}

// rootBase is what every path of kind k starts with: the root Namespace of a profile whose
// namespace-wide policies there apply mesh-wide (semantics.MeshRoot), when it bears a policy.
func (s *Session) rootBase(k *attach.KindIndex) []viaElem {
	ns := semantics.RootNamespaceOf(k.Kind.Profile, k.Kind.GK.Kind)
	if ns == "" {
		return nil
	}
	n := topology.NamespaceNode(ns)
	if !s.bears(n, k) {
		return nil
	}
	return []viaElem{{node: n, level: topology.LevelGatewayClass - 2}}
}

// contexts returns the distinct vias of the paths from a root to n.
func (s *Session) contexts(n topology.NodeID, k *attach.KindIndex) []via {
	mk := memoKey{n, k}
	if v, ok := s.m.vias.get(mk); ok {
		return v
	}
	if s.busy[mk] {
		return nil // cycle guard; the graph is acyclic by construction
	}
	s.busy[mk] = true
	defer delete(s.busy, mk)
	var vs viaSet
	if topology.IsNamespaceNode(n) {
		vs.add(s.extend(s.rootBase(k), n, k), "", nil)
	} else {
		var buf [4]topology.NodeID
		ps := s.g.AppendParents(buf[:0], n)
		if len(ps) == 0 {
			vs.add(s.extend(s.rootBase(k), n, k), "", nil)
		}
		for _, p := range ps {
			var pvs []via
			if topology.IsServiceNode(p) && topology.IsRouteGK(n.GK()) {
				pvs = s.meshFrontContexts(p, k)
			} else {
				pvs = s.contexts(p, k)
			}
			same := len(ps) == 1
			for _, pv := range pvs {
				elems := s.extend(pv.elems, n, k)
				if len(elems) == len(pv.elems) {
					vs.add(elems, pv.key, pv.refs) // n adds nothing: same via
				} else {
					same = false
					vs.add(elems, "", nil)
				}
			}
			if same && len(vs.out) == len(pvs) {
				// One parent and n adds nothing to its (distinct) vias:
				// share the parent's list (most rules, backends, ports).
				vs.out = pvs
			}
		}
	}
	out := vs.out
	if len(out) == 1 && len(out[0].elems) == 0 {
		out = noContext // no policy of k on any path: share one value
	}
	out, _ = s.m.vias.put(mk, out, func([]via) bool { return true })
	return out
}

// meshFrontContexts are the contexts of a Service, or its port, as the
// parent of a mesh route: the top of the path whatever references the
// Service as a backend elsewhere (GAMMA), at the levels of a Gateway and its
// listener.
func (s *Session) meshFrontContexts(p topology.NodeID, k *attach.KindIndex) []via {
	elems := s.extendAt(s.rootBase(k), p.Object(), k, topology.LevelGateway)
	if p.Section != "" {
		elems = s.extendAt(elems, p, k, topology.LevelListener)
	}
	if len(elems) == 0 {
		return noContext
	}
	var vs viaSet
	vs.add(elems, "", nil)
	return vs.out
}

// viaSet collects the distinct vias of a node's contexts, in the order
// they are found (docs/spec.md §5.5: contexts through the same policy-bearing nodes
// are one).
type viaSet struct {
	out  []via
	seen map[string]int // key -> index in out, only for nodes with many contexts
}

// add adds the via of elems unless one with the same key is there. key and
// refs may come from a parent's via that elems equals; "" makes add derive
// them.
func (vs *viaSet) add(elems []viaElem, key string, refs []v1alpha1.ObjectReference) {
	if key == "" && len(elems) > 0 {
		key = viaKeyOf(elems)
		refs = nil
	}
	i, dup := vs.find(key)
	if !dup {
		if refs == nil {
			refs = refsOf(elems)
		}
		vs.out = append(vs.out, via{elems: elems, key: key, refs: refs})
		if vs.seen == nil && len(vs.out) > 8 {
			vs.seen = make(map[string]int, 16)
			for j := range vs.out {
				vs.seen[vs.out[j].key] = j
			}
		} else if vs.seen != nil {
			vs.seen[key] = len(vs.out) - 1
		}
		return
	}
	// The same attachment points reached by another path: keep the least
	// level of each (a Namespace's level depends on the object it is
	// inserted above), so that the result does not depend on order.
	cur := vs.out[i].elems
	var merged []viaElem
	for j := range cur {
		if elems[j].level < cur[j].level {
			if merged == nil {
				merged = append([]viaElem(nil), cur...)
			}
			merged[j].level = elems[j].level
		}
	}
	if merged != nil {
		vs.out[i].elems = merged
	}
}

func (vs *viaSet) find(key string) (int, bool) {
	if vs.seen != nil {
		i, ok := vs.seen[key]
		return i, ok
	}
	for j := range vs.out {
		if vs.out[j].key == key {
			return j, true
		}
	}
	return -1, false
}

// Via returns the via of a path for kind k (nil: no policy of k on it):
// the nodes of path (root first, sections after their objects, Namespace
// nodes left out) that bear a policy of k, with Namespace nodes inserted
// as contexts insert them, as references.
func (s *Session) Via(path []topology.NodeID, k *attach.KindIndex) []v1alpha1.ObjectReference {
	elems := s.rootBase(k)
	for _, n := range path {
		elems = s.extend(elems, n, k)
	}
	return refsOf(elems)
}

// noContext is the contexts of a node no policy of the kind reaches.
var noContext = []via{{}}

// refsOf renders a via as the references of an effective entry.
func refsOf(elems []viaElem) []v1alpha1.ObjectReference {
	if len(elems) == 0 {
		return nil
	}
	out := make([]v1alpha1.ObjectReference, len(elems))
	for i, el := range elems {
		out[i] = el.node.Ref()
	}
	return out
}

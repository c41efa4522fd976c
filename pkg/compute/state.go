package compute

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// attachment is one place a policy is attached to (or, with invalid set,
// listed at as an Invalid source).
type attachment struct {
	node    nodeID
	invalid string
	virtual bool
}

type resolution struct {
	atts    []attachment
	named   []nodeID // objects named by targetRefs (for re-resolution)
	crossNS []string // namespaces named by targetRef.namespace
}

type invalidAt struct {
	pol  *policy
	node nodeID
	msg  string
}

// kindIndex holds the attachments of one policy kind.
type kindIndex struct {
	pk       *policyKind
	at       map[nodeID][]*policy      // valid attachments by node
	sections map[nodeID]map[string]int // object -> sections with attachments
	invalid  map[nodeID][]invalidAt    // owner object -> Invalid listings
	// gen is the attachment generation of each node bearing a policy of
	// this kind: a new value of state.attGen whenever a policy of the kind
	// is attached there or detached. Memoised folds and orders check it.
	gen map[nodeID]uint64
	// changed is the newest gen of the kind: a fold checked at that value
	// is valid without looking at its nodes.
	changed uint64
}

type crdInfo struct {
	name       string
	gk         schema.GroupKind
	labels     map[string]string
	namespaced bool
	plural     string
	served     []string
	storage    string
	schemas    map[string]*apiextv1.JSONSchemaProps
	fp         interface{}
}

type state struct {
	// bulk skips computing affected keys (ComputeAll discards them).
	bulk bool
	// gen counts mutations; structGen counts those that may change the
	// graph or the attachment points (contexts). A cached session keeps
	// its contexts while structGen is unchanged, its folds while gen is.
	gen       uint64
	structGen uint64
	// kindsGen counts rebuilds of the policy kinds (CRD changes); attGen
	// numbers attachment changes (kindIndex.gen).
	kindsGen uint64
	attGen   uint64
	// structural is set by a mutation that changes graph or attachments.
	structural      bool
	defaultStrategy string
	descs           map[schema.GroupKind]Descriptor

	crds         map[string]*crdInfo
	kinds        map[schema.GroupKind]*kindIndex
	crdServed    map[schema.GroupKind]bool
	clusterKinds map[schema.GroupKind]bool

	classes        map[string]bool
	nsLabels       map[string]map[string]string
	gateways       map[nodeID]*gatewayObj
	gwByClass      map[string]map[nodeID]bool
	listenerSets   map[nodeID]*listenerSetObj
	lsByGateway    map[nodeID]map[nodeID]bool
	routes         map[nodeID]*routeObj
	routesByParent map[nodeID]map[nodeID]bool
	services       map[nodeID]*serviceObj
	backendParents map[nodeID]map[nodeID]int
	grants         map[string]map[string]*refGrant
	objLabels      map[nodeID]map[string]string
	fingerprints   map[nodeID]fingerprint
	fpBuf          []byte // scratch of fingerprintOf

	objects map[nodeID]int   // existence: topology objects, referenced backends
	virt    map[nodeID]int   // virtual targets and unserved kinds named by policies
	byKey   map[Key][]nodeID // nodes per output key: usually one, so a slice
	byNS    map[string]map[nodeID]bool

	policies    map[policyID]*policy
	byTarget    map[nodeID]map[*policy]bool
	selPolicies map[string]map[*policy]bool
	crossNS     map[string]map[*policy]bool
	invalidKeys map[Key]map[nodeID]int
}

func newState(opts Options) (*state, error) {
	st := &state{
		descs:          map[schema.GroupKind]Descriptor{},
		crds:           map[string]*crdInfo{},
		kinds:          map[schema.GroupKind]*kindIndex{},
		crdServed:      map[schema.GroupKind]bool{},
		clusterKinds:   map[schema.GroupKind]bool{},
		classes:        map[string]bool{},
		nsLabels:       map[string]map[string]string{},
		gateways:       map[nodeID]*gatewayObj{},
		gwByClass:      map[string]map[nodeID]bool{},
		listenerSets:   map[nodeID]*listenerSetObj{},
		lsByGateway:    map[nodeID]map[nodeID]bool{},
		routes:         map[nodeID]*routeObj{},
		routesByParent: map[nodeID]map[nodeID]bool{},
		services:       map[nodeID]*serviceObj{},
		backendParents: map[nodeID]map[nodeID]int{},
		grants:         map[string]map[string]*refGrant{},
		objLabels:      map[nodeID]map[string]string{},
		fingerprints:   map[nodeID]fingerprint{},
		objects:        map[nodeID]int{},
		virt:           map[nodeID]int{},
		byKey:          map[Key][]nodeID{},
		byNS:           map[string]map[nodeID]bool{},
		policies:       map[policyID]*policy{},
		byTarget:       map[nodeID]map[*policy]bool{},
		selPolicies:    map[string]map[*policy]bool{},
		crossNS:        map[string]map[*policy]bool{},
		invalidKeys:    map[Key]map[nodeID]int{},
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
		st.descs[schema.GroupKind{Group: d.Group, Kind: d.Kind}] = d
	}
	for i, d := range opts.Descriptors {
		if err := d.validate(); err != nil {
			return nil, fmt.Errorf("descriptor %d: %w", i, err)
		}
		st.descs[schema.GroupKind{Group: d.Group, Kind: d.Kind}] = d
	}
	return st, nil
}

// ---- served kinds ----

var (
	schemeKindsOnce sync.Once
	schemeKinds     map[schema.GroupKind]bool
)

func builtinKinds() map[schema.GroupKind]bool {
	schemeKindsOnce.Do(func() {
		schemeKinds = map[schema.GroupKind]bool{}
		for gvk := range clientscheme.Scheme.AllKnownTypes() {
			if gvk.Version == runtime.APIVersionInternal || strings.HasSuffix(gvk.Kind, "List") {
				continue
			}
			schemeKinds[gvk.GroupKind()] = true
		}
	})
	return schemeKinds
}

var builtinClusterKinds = map[schema.GroupKind]bool{
	{Group: "", Kind: "Namespace"}:                                                  true,
	{Group: "", Kind: "Node"}:                                                       true,
	{Group: "", Kind: "PersistentVolume"}:                                           true,
	{Group: gwGroup, Kind: "GatewayClass"}:                                          true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:                       true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:                true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                                 true,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:               true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:   true,
}

func (st *state) clusterScoped(gk schema.GroupKind) bool {
	return builtinClusterKinds[gk] || st.clusterKinds[gk]
}

// served reports whether the cluster serves gk: a kind of the client-go
// scheme, a kind served by a CRD fed to the engine, or a Gateway API kind
// the engine models (the server watches those).
func (st *state) served(gk schema.GroupKind) bool {
	if builtinKinds()[gk] || st.crdServed[gk] || topologyGK(gk) {
		return true
	}
	return false
}

// ---- existence and indexes ----

func (st *state) exists(n nodeID) bool {
	o := n.object()
	if st.objects[o] == 0 && st.virt[o] == 0 {
		return false
	}
	if n.Section == "" {
		return true
	}
	return st.hasSection(n)
}

func (st *state) hasSection(n nodeID) bool {
	o := n.object()
	switch {
	case o.Group == gwGroup && o.Kind == "Gateway":
		if g := st.gateways[o]; g != nil {
			for _, l := range g.listeners {
				if l.name == n.Section {
					return true
				}
			}
		}
		return false
	case isListenerSetGK(o.gk()):
		if ls := st.listenerSets[o]; ls != nil {
			for _, l := range ls.listeners {
				if l.name == n.Section {
					return true
				}
			}
		}
		return false
	case isRouteGK(o.gk()):
		if r := st.routes[o]; r != nil {
			for _, ru := range r.rules {
				if ru.name != "" && ru.name == n.Section {
					return true
				}
			}
		}
		return false
	case o.Group == "" && o.Kind == "Service":
		if s := st.services[o]; s != nil {
			for _, p := range s.ports {
				if p == n.Section {
					return true
				}
			}
		}
		return false
	case o.Group == "" && o.Kind == "Namespace", o.Group == gwGroup && o.Kind == "GatewayClass":
		return false
	}
	return true // other backends and virtual targets: sections are not known, accept them
}

func (st *state) bump(m map[nodeID]int, n nodeID, d int) {
	was := st.objects[n] > 0 || st.virt[n] > 0
	m[n] += d
	if m[n] <= 0 {
		delete(m, n)
	}
	is := st.objects[n] > 0 || st.virt[n] > 0
	if was == is {
		return
	}
	k := n.key()
	if is {
		if !slices.Contains(st.byKey[k], n) {
			st.byKey[k] = append(st.byKey[k], n)
		}
		if n.Namespace != "" {
			addSet(st.byNS, n.Namespace, n)
		}
	} else {
		if l := slices.DeleteFunc(st.byKey[k], func(x nodeID) bool { return x == n }); len(l) == 0 {
			delete(st.byKey, k)
		} else {
			st.byKey[k] = l
		}
		if n.Namespace != "" {
			delSet(st.byNS, n.Namespace, n)
		}
	}
}

func addSet[K comparable, V comparable](m map[K]map[V]bool, k K, v V) {
	s := m[k]
	if s == nil {
		s = map[V]bool{}
		m[k] = s
	}
	s[v] = true
}

func delSet[K comparable, V comparable](m map[K]map[V]bool, k K, v V) {
	if s := m[k]; s != nil {
		delete(s, v)
		if len(s) == 0 {
			delete(m, k)
		}
	}
}

type keySet map[Key]bool

func (ks keySet) sorted() []Key {
	out := make([]Key, 0, len(ks))
	for k := range ks {
		out = append(out, k)
	}
	sortKeys(out)
	return out
}

func sortKeys(ks []Key) {
	sort.Slice(ks, func(i, j int) bool {
		if ks[i].Namespace != ks[j].Namespace {
			return ks[i].Namespace < ks[j].Namespace
		}
		return ks[i].Name < ks[j].Name
	})
}

// ---- graph ----

func (st *state) lsAllowed(g *gatewayObj, ls *listenerSetObj) bool {
	switch g.lsFrom {
	case "Same":
		return ls.id.Namespace == g.id.Namespace
	case "All":
		return true
	case "Selector":
		return g.lsSel != nil && g.lsSel.Matches(labels.Set(st.nsLabels[ls.id.Namespace]))
	}
	return false
}

func (st *state) admits(l listener, ownerNS string, r *routeObj) bool {
	switch l.from {
	case "All":
	case "Selector":
		if l.selector == nil || !l.selector.Matches(labels.Set(st.nsLabels[r.id.Namespace])) {
			return false
		}
	case "Same":
		if r.id.Namespace != ownerNS {
			return false
		}
	default:
		return false
	}
	if l.kinds != nil {
		for _, k := range l.kinds {
			if k.Group == r.id.Group && k.Kind == r.id.Kind {
				return true
			}
		}
		return false
	}
	if dk := defaultRouteKinds(l.protocol); dk != nil {
		for _, k := range dk {
			if k == r.id.Kind {
				return true
			}
		}
		return false
	}
	return true
}

// attachesTo reports whether route r attaches to listener section n.
func (st *state) attachesTo(r *routeObj, n nodeID) bool {
	found := false
	st.eachRouteParent(r, func(p nodeID) bool {
		found = p == n
		return !found
	})
	return found
}

// eachRouteParent calls fn with each listener section a route attaches to
// (possibly more than once), until fn returns false.
func (st *state) eachRouteParent(r *routeObj, fn func(nodeID) bool) {
	for _, pr := range r.parentRefs {
		var ls []listener
		switch {
		case pr.id.Kind == "Gateway":
			g := st.gateways[pr.id]
			if g == nil {
				continue
			}
			ls = g.listeners
		default:
			l := st.listenerSets[pr.id]
			if l == nil {
				continue
			}
			ls = l.listeners
		}
		for _, l := range ls {
			if pr.section != "" && pr.section != l.name {
				continue
			}
			if pr.port != 0 && pr.port != l.port {
				continue
			}
			if !st.admits(l, pr.id.Namespace, r) {
				continue
			}
			n := pr.id
			n.Section = l.name
			if !fn(n) {
				return
			}
		}
	}
}

// appendParents appends the parent nodes of n in the hierarchy to dst
// (Namespace nodes are not part of the graph; they are inserted into paths,
// see session.contexts). Callers pass a small array's slice as dst: most
// nodes have one parent, and nothing needs to be allocated.
func (st *state) appendParents(dst []nodeID, n nodeID) []nodeID {
	if n.Section != "" {
		return append(dst, n.object())
	}
	gk := n.gk()
	switch {
	case isNamespaceNode(n), gk.Group == gwGroup && gk.Kind == "GatewayClass":
		return dst
	case gk.Group == gwGroup && gk.Kind == "Gateway":
		if g := st.gateways[n]; g != nil && st.classes[g.class] {
			return append(dst, nodeID{Group: gwGroup, Kind: "GatewayClass", Name: g.class})
		}
		return dst
	case isListenerSetGK(gk):
		if ls := st.listenerSets[n]; ls != nil {
			if g := st.gateways[ls.parent]; g != nil && st.lsAllowed(g, ls) {
				return append(dst, g.id)
			}
		}
		return dst
	case isRouteGK(gk):
		if r := st.routes[n]; r != nil {
			st.eachRouteParent(r, func(p nodeID) bool {
				if !slices.Contains(dst, p) { // a handful of parents: no map
					dst = append(dst, p)
				}
				return true
			})
			return dst
		}
		return dst
	}
	ps := st.backendParents[n]
	if len(ps) == 0 {
		return dst
	}
	start := len(dst)
	for p := range ps {
		dst = append(dst, p)
	}
	slices.SortFunc(dst[start:], cmpNode)
	return dst
}

// cmpNode orders nodes like lessNode.
func cmpNode(a, b nodeID) int {
	switch {
	case lessNode(a, b):
		return -1
	case lessNode(b, a):
		return 1
	}
	return 0
}

// children is the inverse of parents, plus Namespace -> objects in it.
func (st *state) children(n nodeID, fn func(nodeID)) {
	gk := n.gk()
	switch {
	case isNamespaceNode(n):
		for c := range st.byNS[n.Name] {
			fn(c)
		}
	case gk.Group == gwGroup && gk.Kind == "GatewayClass":
		for c := range st.gwByClass[n.Name] {
			fn(c)
		}
	case gk.Group == gwGroup && gk.Kind == "Gateway" && n.Section == "":
		g := st.gateways[n]
		if g == nil {
			return
		}
		for _, l := range g.listeners {
			c := n
			c.Section = l.name
			fn(c)
		}
		for c := range st.lsByGateway[n] {
			if ls := st.listenerSets[c]; ls != nil && st.lsAllowed(g, ls) {
				fn(c)
			}
		}
	case isListenerSetGK(gk) && n.Section == "":
		if ls := st.listenerSets[n]; ls != nil {
			for _, l := range ls.listeners {
				c := n
				c.Section = l.name
				fn(c)
			}
		}
	case (gk.Group == gwGroup && gk.Kind == "Gateway") || isListenerSetGK(gk):
		for rid := range st.routesByParent[n.object()] {
			r := st.routes[rid]
			if r == nil {
				continue
			}
			if st.attachesTo(r, n) {
				fn(rid)
			}
		}
	case isRouteGK(gk):
		r := st.routes[n.object()]
		if r == nil {
			return
		}
		for _, ru := range r.rules {
			if n.Section == "" && ru.name != "" {
				c := n
				c.Section = ru.name
				fn(c)
				continue
			}
			if ru.name != n.Section {
				continue
			}
			for _, b := range ru.backends {
				if st.objects[b] > 0 {
					fn(b)
				}
			}
		}
	case gk.Group == "" && gk.Kind == "Service" && n.Section == "":
		if s := st.services[n]; s != nil {
			for _, p := range s.ports {
				c := n
				c.Section = p
				fn(c)
			}
		}
	}
}

// subtree adds the keys of n's owner and of every node below n.
func (st *state) subtree(n nodeID, ks keySet, seen map[nodeID]bool) {
	if st.bulk {
		return
	}
	st.walk(n, ks, seen)
}

func (st *state) walk(n nodeID, ks keySet, seen map[nodeID]bool) {
	if seen[n] {
		return
	}
	seen[n] = true
	ks[n.key()] = true
	st.children(n, func(c nodeID) { st.walk(c, ks, seen) })
}

// ---- upsert / delete ----

func isCRD(o *unstructured.Unstructured) bool {
	gvk := o.GroupVersionKind()
	return gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition"
}

// recoverPanics is a last line of defence: inputs can never crash the
// engine. Tests (the fuzzer) turn it off to see any panic.
var recoverPanics = true

// recoveredPanics counts the panics recoverPanics swallowed (see
// RecoveredPanics), so that a swallowed panic is never silent.
var recoveredPanics atomic.Uint64

func (st *state) upsert(u *unstructured.Unstructured) (keys []Key) {
	if u == nil || u.Object == nil {
		return nil
	}
	if recoverPanics {
		defer func() {
			if r := recover(); r != nil {
				recoveredPanics.Add(1)
				keys = nil
			}
		}()
	}
	gvk := u.GroupVersionKind()
	return st.mutate(func() []Key { return st.apply(gvk.GroupKind(), u.GetNamespace(), u.GetName(), u) })
}

// mutate runs one mutation and advances the generations.
func (st *state) mutate(f func() []Key) []Key {
	st.structural = true // unless the mutation says otherwise
	defer func() {
		st.gen++
		if st.structural {
			st.structGen++
		}
	}()
	return f()
}

func (st *state) delete(gk schema.GroupKind, ns, name string) (keys []Key) {
	if recoverPanics {
		defer func() {
			if r := recover(); r != nil {
				recoveredPanics.Add(1)
				keys = nil
			}
		}()
	}
	return st.mutate(func() []Key { return st.apply(gk, ns, name, nil) })
}

// apply upserts (u != nil) or deletes (u == nil) one object.
func (st *state) apply(gk schema.GroupKind, ns, name string, u *unstructured.Unstructured) []Key {
	if name == "" {
		return nil
	}
	if gk.Group == "apiextensions.k8s.io" && gk.Kind == "CustomResourceDefinition" {
		return st.applyCRD(name, u)
	}
	if _, ok := st.kinds[gk]; ok {
		return st.applyPolicy(gk, ns, name, u)
	}
	var obj map[string]interface{}
	var spec map[string]interface{}
	var lbls map[string]string
	if u != nil {
		obj = u.Object
		spec = mget(obj, "spec")
		lbls = u.GetLabels()
	}
	switch {
	case gk.Group == "" && gk.Kind == "Namespace":
		return st.applyNamespace(name, u != nil, lbls)
	case gk.Group == gwGroup && gk.Kind == "GatewayClass":
		n := nodeID{Group: gwGroup, Kind: "GatewayClass", Name: name}
		return st.applyTopo(n, u != nil, lbls, spec, func(add bool) {
			if add {
				st.classes[name] = true
				st.bump(st.objects, n, 1)
			} else if st.classes[name] {
				delete(st.classes, name)
				st.bump(st.objects, n, -1)
			}
		})
	case gk.Group == gwGroup && gk.Kind == "ReferenceGrant":
		if ns == "" {
			return nil
		}
		return st.applyGrant(ns, name, u != nil, spec)
	}
	if ns == "" {
		return nil // namespaced kinds only from here on
	}
	n := nodeID{Group: gk.Group, Kind: gk.Kind, Namespace: ns, Name: name}
	switch {
	case gk.Group == gwGroup && gk.Kind == "Gateway":
		return st.applyTopo(n, u != nil, lbls, spec, func(add bool) {
			if old := st.gateways[n]; old != nil {
				delSet(st.gwByClass, old.class, n)
				delete(st.gateways, n)
				st.bump(st.objects, n, -1)
			}
			if add {
				g := parseGateway(n, spec)
				st.gateways[n] = g
				addSet(st.gwByClass, g.class, n)
				st.bump(st.objects, n, 1)
			}
		})
	case isListenerSetGK(gk):
		return st.applyTopo(n, u != nil, lbls, spec, func(add bool) {
			if old := st.listenerSets[n]; old != nil {
				delSet(st.lsByGateway, old.parent, n)
				delete(st.listenerSets, n)
				st.bump(st.objects, n, -1)
			}
			if add {
				ls := parseListenerSet(n, spec)
				st.listenerSets[n] = ls
				addSet(st.lsByGateway, ls.parent, n)
				st.bump(st.objects, n, 1)
			}
		})
	case isRouteGK(gk):
		var touched []nodeID
		keys := st.applyTopo(n, u != nil, lbls, spec, func(add bool) {
			if old := st.routes[n]; old != nil {
				for _, pr := range old.parentRefs {
					delSet(st.routesByParent, pr.id, n)
				}
				st.routeBackends(old, -1, &touched)
				delete(st.routes, n)
				st.bump(st.objects, n, -1)
			}
			if add {
				r := parseRoute(n, spec)
				st.routes[n] = r
				for _, pr := range r.parentRefs {
					addSet(st.routesByParent, pr.id, n)
				}
				st.routeBackends(r, 1, &touched)
				st.bump(st.objects, n, 1)
			}
		})
		if len(touched) > 0 {
			ks := keySet{}
			for _, k := range keys {
				ks[k] = true
			}
			st.reresolve(st.policiesNaming(touched, nil), ks)
			keys = ks.sorted()
		}
		return keys
	case gk.Group == "" && gk.Kind == "Service":
		return st.applyTopo(n, u != nil, lbls, spec, func(add bool) {
			if st.services[n] != nil {
				delete(st.services, n)
				st.bump(st.objects, n, -1)
			}
			if add {
				st.services[n] = parseService(n, spec)
				st.bump(st.objects, n, 1)
			}
		})
	}
	return nil
}

func (st *state) routeBackends(r *routeObj, d int, touched *[]nodeID) {
	for _, ru := range r.rules {
		parent := r.id
		if ru.name != "" {
			parent.Section = ru.name
		}
		for _, b := range ru.backends {
			m := st.backendParents[b]
			if m == nil {
				m = map[nodeID]int{}
				st.backendParents[b] = m
			}
			m[parent] += d
			if m[parent] <= 0 {
				delete(m, parent)
			}
			if len(m) == 0 {
				delete(st.backendParents, b)
			}
			if !(b.Group == "" && b.Kind == "Service") {
				st.bump(st.objects, b, d)
				*touched = append(*touched, b)
			}
		}
	}
}

func deepCopyMapOrNil(m map[string]interface{}) map[string]interface{} {
	if m == nil {
		return nil
	}
	return deepCopyMap(m)
}

// applyTopo handles a topology object: the keys of its subtree before and
// after the change, plus the reach of policies that name or select it.
func (st *state) applyTopo(n nodeID, add bool, lbls map[string]string, spec map[string]interface{}, mutate func(add bool)) []Key {
	var fp fingerprint
	fp, st.fpBuf = fingerprintOf(st.fpBuf, spec, lbls)
	if old, ok := st.fingerprints[n]; add && ok && old == fp {
		return nil
	}
	if !add {
		if _, ok := st.fingerprints[n]; !ok {
			return nil
		}
	}
	ks := keySet{}
	st.subtree(n, ks, map[nodeID]bool{})
	mutate(add)
	if add {
		st.fingerprints[n] = fp
		st.objLabels[n] = lbls
	} else {
		delete(st.fingerprints, n)
		delete(st.objLabels, n)
	}
	st.subtree(n, ks, map[nodeID]bool{})
	st.reresolve(st.policiesNaming([]nodeID{n}, &n), ks)
	return ks.sorted()
}

// policiesNaming returns the policies whose named targets include one of
// nodes, plus (when sel is set) the selector policies of sel's namespace.
func (st *state) policiesNaming(nodes []nodeID, sel *nodeID) []*policy {
	set := map[*policy]bool{}
	for _, n := range nodes {
		for p := range st.byTarget[n.object()] {
			set[p] = true
		}
	}
	if sel != nil {
		for p := range st.selPolicies[sel.Namespace] {
			for _, s := range p.selectors {
				if s.gk == sel.gk() {
					set[p] = true
				}
			}
		}
	}
	return sortedPolicies(set)
}

func sortedPolicies(set map[*policy]bool) []*policy {
	out := make([]*policy, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return lessPolicyID(out[i].id, out[j].id) })
	return out
}

func lessPolicyID(a, b policyID) bool {
	if a.gk.Group != b.gk.Group {
		return a.gk.Group < b.gk.Group
	}
	if a.gk.Kind != b.gk.Kind {
		return a.gk.Kind < b.gk.Kind
	}
	if a.namespace != b.namespace {
		return a.namespace < b.namespace
	}
	return a.nm < b.nm
}

func (st *state) applyNamespace(name string, add bool, lbls map[string]string) []Key {
	n := namespaceNode(name)
	old, had := st.nsLabels[name]
	if add && had && reflect.DeepEqual(old, lbls) {
		return nil
	}
	if !add && !had {
		return nil
	}
	ks := keySet{}
	// Labels decide which routes and ListenerSets listeners admit.
	affectNS := func() {
		for c := range st.byNS[name] {
			if isRouteGK(c.gk()) || isListenerSetGK(c.gk()) {
				st.subtree(c, ks, map[nodeID]bool{})
			}
		}
	}
	affectNS()
	if add {
		if lbls == nil {
			lbls = map[string]string{}
		}
		st.nsLabels[name] = lbls
		if !had {
			st.bump(st.objects, n, 1)
		}
	} else {
		delete(st.nsLabels, name)
		st.bump(st.objects, n, -1)
	}
	affectNS()
	st.reresolve(st.policiesNaming([]nodeID{n}, nil), ks)
	return ks.sorted()
}

func (st *state) applyGrant(ns, name string, add bool, spec map[string]interface{}) []Key {
	if add {
		if st.grants[ns] == nil {
			st.grants[ns] = map[string]*refGrant{}
		}
		st.grants[ns][name] = parseGrant(spec)
	} else {
		if st.grants[ns] == nil || st.grants[ns][name] == nil {
			return nil
		}
		delete(st.grants[ns], name)
		if len(st.grants[ns]) == 0 {
			delete(st.grants, ns)
		}
	}
	ks := keySet{}
	set := map[*policy]bool{}
	for p := range st.crossNS[ns] {
		set[p] = true
	}
	st.reresolve(sortedPolicies(set), ks)
	return ks.sorted()
}

// grantNamespace is where a ReferenceGrant for target t must live.
func grantNamespace(t nodeID) string {
	if isNamespaceNode(t) {
		return t.Name
	}
	return t.Namespace
}

func (st *state) granted(p *policy, t nodeID) bool {
	for _, g := range st.grants[grantNamespace(t)] {
		from := false
		for _, f := range g.from {
			if f.group == p.id.gk.Group && f.kind == p.id.gk.Kind && f.ns == p.id.namespace {
				from = true
				break
			}
		}
		if !from {
			continue
		}
		for _, to := range g.to {
			if to.group == t.Group && to.kind == t.Kind && (to.name == "" || to.name == t.Name) {
				return true
			}
		}
	}
	return false
}

// ---- policies ----

func (st *state) applyPolicy(gk schema.GroupKind, ns, name string, u *unstructured.Unstructured) []Key {
	ki := st.kinds[gk]
	if !ki.pk.namespaced {
		ns = ""
	} else if ns == "" {
		return nil
	}
	id := policyID{gk: gk, namespace: ns, nm: name}
	ks := keySet{}
	old := st.policies[id]
	if u != nil && old != nil && reflect.DeepEqual(old.raw["spec"], u.Object["spec"]) && old.ts.Equal(u.GetCreationTimestamp().Time) {
		return nil
	}
	var oldRes resolution
	if old != nil {
		oldRes = old.res
		st.affect(old, ks)
		st.unapply(old)
		delete(st.policies, id)
	}
	if u != nil {
		// Keep a private copy of the spec (descriptor paths all start at
		// spec; the rest of the object is not needed): callers may reuse
		// their object.
		p := parsePolicy(ki.pk, specOnlyCopy(u.Object), ns, name, u.GetCreationTimestamp().Time, st.defaultStrategy, st.clusterScoped)
		st.policies[id] = p
		p.res = st.resolve(p)
		st.applyRes(p, 1)
		st.affect(p, ks)
		// Same attachment points: the contexts (paths and vias) of every
		// target are unchanged, only folds are.
		if old != nil && old.class == p.class && sameAttachments(oldRes.atts, p.res.atts) {
			st.structural = false
		}
	}
	return ks.sorted()
}

// specOnlyCopy copies what parsePolicy reads of a policy object: its spec
// (or its absence).
func specOnlyCopy(obj map[string]interface{}) map[string]interface{} {
	spec, ok := obj["spec"]
	if !ok {
		return map[string]interface{}{}
	}
	return map[string]interface{}{"spec": deepCopyValue(spec)}
}

// reresolve recomputes the attachments of ps, adding old and new reach to ks.
func (st *state) reresolve(ps []*policy, ks keySet) {
	for _, p := range ps {
		st.affect(p, ks)
		st.unapply(p)
		p.res = st.resolve(p)
		st.applyRes(p, 1)
		st.affect(p, ks)
	}
}

func sameAttachments(a, b []attachment) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (st *state) unapply(p *policy) {
	st.applyRes(p, -1)
	p.res = resolution{}
}

// affect adds the keys a policy's current attachments reach.
func (st *state) affect(p *policy, ks keySet) {
	if st.bulk {
		return
	}
	seen := map[nodeID]bool{}
	for _, a := range p.res.atts {
		ks[a.node.key()] = true
		if a.invalid == "" && p.class == v1alpha1.ClassInherited {
			st.subtree(a.node, ks, seen)
		}
	}
}

func (st *state) resolve(p *policy) resolution {
	var r resolution
	seen := map[nodeID]bool{}
	add := func(a attachment) {
		if seen[a.node] {
			return
		}
		seen[a.node] = true
		r.atts = append(r.atts, a)
	}
	for _, ref := range p.refs {
		if ref.invalid != "" {
			continue
		}
		t := ref.target
		r.named = append(r.named, t.object())
		cross := ref.explNS && p.id.namespace != ""
		if cross {
			r.crossNS = append(r.crossNS, grantNamespace(t))
		}
		var a attachment
		switch {
		case !st.served(t.gk()):
			a.virtual = true
			a.node = t
			if !st.exists(t) {
				a.node.Namespace = p.id.namespace
			}
		case st.exists(t):
			a.node = t
		default:
			continue // a served kind that does not exist reaches nothing
		}
		switch {
		case p.invalid != "":
			a.invalid = p.invalid
		case cross && !st.granted(p, t):
			a.invalid = fmt.Sprintf("target %s is in namespace %q and no ReferenceGrant there allows %s from namespace %q to reach it", t, grantNamespace(t), p.id.gk.Kind, p.id.namespace)
		}
		add(a)
	}
	if len(p.selectors) > 0 && p.id.namespace != "" {
		var matched []nodeID
		for n := range st.byNS[p.id.namespace] {
			if st.objects[n] == 0 {
				continue
			}
			for _, s := range p.selectors {
				if s.gk == n.gk() && s.sel.Matches(labels.Set(st.objLabels[n])) {
					matched = append(matched, n)
					break
				}
			}
		}
		sort.Slice(matched, func(i, j int) bool { return lessNode(matched[i], matched[j]) })
		for _, n := range matched {
			add(attachment{node: n, invalid: p.invalid})
		}
	}
	if len(r.atts) == 0 && p.invalid != "" && p.id.namespace != "" {
		add(attachment{node: namespaceNode(p.id.namespace), invalid: p.invalid})
	}
	return r
}

func (st *state) applyRes(p *policy, d int) {
	ki := st.kinds[p.id.gk]
	for _, a := range p.res.atts {
		o := a.node.object()
		if a.virtual {
			st.bump(st.virt, o, d)
		}
		if a.invalid != "" {
			if ki != nil {
				if d > 0 {
					ki.invalid[o] = append(ki.invalid[o], invalidAt{pol: p, node: a.node, msg: a.invalid})
				} else {
					l := ki.invalid[o][:0]
					for _, x := range ki.invalid[o] {
						if x.pol != p {
							l = append(l, x)
						}
					}
					if len(l) == 0 {
						delete(ki.invalid, o)
					} else {
						ki.invalid[o] = l
					}
				}
			}
			k := o.key()
			m := st.invalidKeys[k]
			if m == nil {
				m = map[nodeID]int{}
				st.invalidKeys[k] = m
			}
			m[o] += d
			if m[o] <= 0 {
				delete(m, o)
			}
			if len(m) == 0 {
				delete(st.invalidKeys, k)
			}
			continue
		}
		if ki == nil {
			continue
		}
		st.attGen++
		ki.gen[a.node] = st.attGen
		ki.changed = st.attGen
		if d > 0 {
			ki.at[a.node] = append(ki.at[a.node], p)
		} else {
			l := ki.at[a.node][:0]
			for _, x := range ki.at[a.node] {
				if x != p {
					l = append(l, x)
				}
			}
			if len(l) == 0 {
				delete(ki.at, a.node)
				delete(ki.gen, a.node)
			} else {
				ki.at[a.node] = l
			}
		}
		if a.node.Section != "" {
			m := ki.sections[o]
			if m == nil {
				m = map[string]int{}
				ki.sections[o] = m
			}
			m[a.node.Section] += d
			if m[a.node.Section] <= 0 {
				delete(m, a.node.Section)
			}
			if len(m) == 0 {
				delete(ki.sections, o)
			}
		}
	}
	for _, n := range p.res.named {
		if d > 0 {
			addSet(st.byTarget, n, p)
		} else {
			delSet(st.byTarget, n, p)
		}
	}
	for _, ns := range p.res.crossNS {
		if d > 0 {
			addSet(st.crossNS, ns, p)
		} else {
			delSet(st.crossNS, ns, p)
		}
	}
	if len(p.selectors) > 0 && p.id.namespace != "" {
		if d > 0 {
			addSet(st.selPolicies, p.id.namespace, p)
		} else {
			delSet(st.selPolicies, p.id.namespace, p)
		}
	}
}

// ---- CRDs ----

func (st *state) applyCRD(name string, u *unstructured.Unstructured) []Key {
	var info *crdInfo
	if u != nil {
		info = parseCRD(name, u)
		if info == nil {
			return nil
		}
		if old := st.crds[name]; old != nil && reflect.DeepEqual(old.fp, info.fp) {
			return nil
		}
	} else if st.crds[name] == nil {
		return nil
	}
	ks := keySet{}
	if !st.bulk {
		for _, k := range st.keys() {
			ks[k] = true
		}
	}
	if info != nil {
		st.crds[name] = info
	} else {
		delete(st.crds, name)
	}
	st.rebuildKinds()
	if !st.bulk {
		for _, k := range st.keys() {
			ks[k] = true
		}
	}
	return ks.sorted()
}

func parseCRD(name string, u *unstructured.Unstructured) *crdInfo {
	var crd apiextv1.CustomResourceDefinition
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &crd); err != nil {
		return nil
	}
	info := &crdInfo{
		name:       name,
		gk:         schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind},
		labels:     crd.Labels,
		namespaced: crd.Spec.Scope != apiextv1.ClusterScoped,
		plural:     crd.Spec.Names.Plural,
		schemas:    map[string]*apiextv1.JSONSchemaProps{},
		fp:         []interface{}{deepCopyValue(u.Object["spec"]), crd.Labels},
	}
	if info.gk.Kind == "" {
		return nil
	}
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if v.Served {
			info.served = append(info.served, v.Name)
		}
		if v.Storage {
			info.storage = v.Name
		}
		if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			info.schemas[v.Name] = v.Schema.OpenAPIV3Schema
		}
	}
	return info
}

// rebuildKinds recomputes policy kinds and served kinds from the CRDs, then
// re-parses and re-resolves every policy.
func (st *state) rebuildKinds() {
	for _, p := range sortedPolicyMap(st.policies) {
		st.unapply(p)
	}
	st.crdServed = map[schema.GroupKind]bool{}
	st.clusterKinds = map[schema.GroupKind]bool{}
	newKinds := map[schema.GroupKind]*kindIndex{}
	names := make([]string, 0, len(st.crds))
	for n := range st.crds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c := st.crds[n]
		if len(c.served) == 0 {
			continue
		}
		st.crdServed[c.gk] = true
		if !c.namespaced {
			st.clusterKinds[c.gk] = true
		}
		d, ok := st.descs[c.gk]
		if !ok {
			v, has := c.labels["gateway.networking.k8s.io/policy"]
			switch strings.ToLower(v) {
			case "direct", "true":
				d = conventionDescriptor(c.gk.Group, c.gk.Kind, v1alpha1.ClassDirect)
			case "inherited":
				d = conventionDescriptor(c.gk.Group, c.gk.Kind, v1alpha1.ClassInherited)
			default:
				has = false
			}
			if !has {
				continue
			}
		}
		version := c.storage
		if version == "" || !contains(c.served, version) {
			version = c.served[0]
		}
		if _, dup := newKinds[c.gk]; dup {
			continue
		}
		newKinds[c.gk] = &kindIndex{
			pk: &policyKind{
				gk:         c.gk,
				gvr:        schema.GroupVersionResource{Group: c.gk.Group, Version: version, Resource: c.plural},
				desc:       d,
				namespaced: c.namespaced,
				schema:     c.schemas[version],
			},
			at:       map[nodeID][]*policy{},
			sections: map[nodeID]map[string]int{},
			invalid:  map[nodeID][]invalidAt{},
			gen:      map[nodeID]uint64{},
		}
	}
	st.kinds = newKinds
	st.kindsGen++
	old := st.policies
	st.policies = map[policyID]*policy{}
	for _, p := range sortedPolicyMap(old) {
		ki := st.kinds[p.id.gk]
		if ki == nil {
			continue // the CRD is gone: forget its policies
		}
		np := parsePolicy(ki.pk, p.raw, p.id.namespace, p.id.nm, p.ts, st.defaultStrategy, st.clusterScoped)
		st.policies[np.id] = np
	}
	for _, p := range sortedPolicyMap(st.policies) {
		p.res = st.resolve(p)
		st.applyRes(p, 1)
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func sortedPolicyMap(m map[policyID]*policy) []*policy {
	out := make([]*policy, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return lessPolicyID(out[i].id, out[j].id) })
	return out
}

func (st *state) policyResources() []schema.GroupVersionResource {
	out := make([]schema.GroupVersionResource, 0, len(st.kinds))
	for _, ki := range st.kinds {
		out = append(out, ki.pk.gvr)
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

// keys computes the keys with output: objects reached by an inherited
// attachment (its subtree), objects a direct policy is attached to, and
// owners of Invalid listings.
func (st *state) keys() []Key {
	ks := make(keySet, len(st.byKey))
	seen := make(map[nodeID]bool, len(st.objects))
	for _, ki := range st.kinds {
		for n := range ki.at {
			ks[n.key()] = true
			if ki.pk.desc.Class == v1alpha1.ClassInherited {
				st.walk(n, ks, seen)
			}
		}
	}
	for k := range st.invalidKeys {
		ks[k] = true
	}
	return ks.sorted()
}

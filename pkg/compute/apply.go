package compute

// Applying input objects to the state: the table of topology kinds and
// their appliers, Namespaces and ReferenceGrants, and the bookkeeping of
// which outputs a change may affect (which policies it concerns is the
// attachments' business, pkg/compute/attach).

import (
	"reflect"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

func isCRD(o *unstructured.Unstructured) bool {
	gvk := o.GroupVersionKind()
	return gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition"
}

// recoverPanics is a last line of defense: inputs can never crash the
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
	keys := f()
	if st.bulk {
		return keys
	}
	return st.settleRejections(keys)
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

// apply upserts (u != nil) or deletes (u == nil) one object: a CRD, a
// policy of a known kind, or a topology object through its kind's entry in
// topologyAppliers.
func (st *state) apply(gk schema.GroupKind, ns, name string, u *unstructured.Unstructured) []Key {
	if name == "" {
		return nil
	}
	if gk.Group == "apiextensions.k8s.io" && gk.Kind == "CustomResourceDefinition" {
		return st.applyCRD(name, u)
	}
	if st.att.Kind(gk) != nil {
		return st.applyPolicy(gk, ns, name, u)
	}
	a, ok := topologyAppliers[gk]
	if !ok || (a.namespaced && ns == "") {
		return nil
	}
	in := topoInput{id: topology.NodeID{Group: gk.Group, Kind: gk.Kind, Namespace: ns, Name: name}}
	if !a.namespaced {
		in.id.Namespace = ""
	}
	if u != nil {
		in.present = true
		in.spec = topology.MapField(u.Object, "spec")
		in.labels = u.GetLabels()
		in.annotations = routeAnnotations(gk, u.GetAnnotations())
		in.created = u.GetCreationTimestamp().Time
		// The spec is kept, encoded: request traces read routes' rules from
		// it, and a review puts an object back as it was (whatif.go).
		st.specs[in.id], st.specBuf = keepSpec(st.specBuf, in.spec)
	} else {
		delete(st.specs, in.id)
	}
	return a.apply(st, in)
}

// topoInput is one topology object as an applier sees it: present false
// means it was deleted.
type topoInput struct {
	id          topology.NodeID
	present     bool
	labels      map[string]string
	annotations map[string]string // those the engine keeps (routeAnnotations)
	spec        map[string]interface{}
	created     time.Time
}

// topologyApplier updates the state for one topology kind.
type topologyApplier struct {
	namespaced bool
	apply      func(st *state, in topoInput) []Key
}

// topologyAppliers maps every topology group/kind the engine models to its
// applier: the hierarchy's objects (docs/spec.md §3) and the ReferenceGrants and
// Namespaces that decide who may reach whom.
var topologyAppliers = func() map[schema.GroupKind]topologyApplier {
	m := map[schema.GroupKind]topologyApplier{
		{Kind: "Namespace"}: {apply: applyNamespaceObject},
		{Group: topology.GatewayGroup, Kind: "GatewayClass"}:      {apply: applyGatewayClass},
		{Group: topology.GatewayGroup, Kind: "ReferenceGrant"}:    {namespaced: true, apply: applyReferenceGrant},
		{Group: topology.GatewayGroup, Kind: "Gateway"}:           {namespaced: true, apply: applyGateway},
		{Group: topology.GatewayGroup, Kind: "ListenerSet"}:       {namespaced: true, apply: applyListenerSet},
		{Group: topology.ExperimentalGroup, Kind: "XListenerSet"}: {namespaced: true, apply: applyListenerSet},
		{Kind: "Service"}: {namespaced: true, apply: applyService},
	}
	for kind := range topology.RouteKinds {
		for _, group := range []string{topology.GatewayGroup, topology.ExperimentalGroup} {
			m[schema.GroupKind{Group: group, Kind: kind}] = topologyApplier{namespaced: true, apply: applyRoute}
		}
	}
	return m
}()

func applyNamespaceObject(st *state, in topoInput) []Key {
	return st.applyNamespace(in.id.Name, in.present, in.labels)
}

func applyReferenceGrant(st *state, in topoInput) []Key {
	return st.applyGrant(in.id.Namespace, in.id.Name, in.present, in.spec)
}

func applyGatewayClass(st *state, in topoInput) []Key {
	n, name := in.id, in.id.Name
	return st.applyTopo(n, in.present, in.labels, func(add bool) {
		st.graph.ApplyGatewayClass(n, add, topology.StringField(in.spec, "controllerName"))
		if add {
			st.classControllers[name] = topology.StringField(in.spec, "controllerName")
		} else {
			delete(st.classControllers, name)
		}
	})
}

func applyGateway(st *state, in topoInput) []Key {
	return st.applyTopo(in.id, in.present, in.labels, func(add bool) {
		st.graph.ApplyGateway(in.id, add, in.spec)
	})
}

func applyListenerSet(st *state, in topoInput) []Key {
	return st.applyTopo(in.id, in.present, in.labels, func(add bool) {
		st.graph.ApplyListenerSet(in.id, add, in.spec)
	})
}

// applyRoute also re-resolves the policies that name a backend whose
// references changed: a backend's attachment depends on the routes that
// reference it.
func applyRoute(st *state, in topoInput) []Key {
	n := in.id
	if r := st.graph.Routes[n]; r != nil && in.present {
		// Kept up to date even when nothing the outputs read changed: a
		// route re-created with the same spec is younger.
		r.Created = in.created
	}
	var touched []topology.NodeID
	keys := st.applyTopoWith(n, in.present, in.labels, in.annotations, func(add bool) {
		st.graph.ApplyRoute(n, add, in.spec, in.annotations, in.created, &touched)
	})
	if len(touched) > 0 {
		ks := keySet{}
		for _, k := range keys {
			ks[k] = true
		}
		st.reresolve(st.att.PoliciesNaming(touched, nil), ks)
		keys = ks.sorted()
	}
	return keys
}

func applyService(st *state, in topoInput) []Key {
	return st.applyTopo(in.id, in.present, in.labels, func(add bool) {
		st.graph.ApplyService(in.id, add, in.spec)
	})
}

// routeAnnotations are the annotations of a topology object the engine reads: an
// HTTPRoute's kgateway annotations (topology.RouteAnnotations), nil for the rest.
func routeAnnotations(gk schema.GroupKind, ann map[string]string) map[string]string {
	if gk.Group != topology.GatewayGroup || gk.Kind != "HTTPRoute" {
		return nil
	}
	var out map[string]string
	for _, k := range topology.RouteAnnotations {
		if v, ok := ann[k]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// applyTopo handles a topology object: the keys of its subtree before and
// after the change, plus the reach of policies that name or select it.
// The object's spec is in st.specs already (apply).
func (st *state) applyTopo(n topology.NodeID, add bool, lbls map[string]string, mutate func(add bool)) []Key {
	return st.applyTopoWith(n, add, lbls, nil, mutate)
}

// applyTopoWith is applyTopo for an object whose kept annotations (ann) matter too.
func (st *state) applyTopoWith(n topology.NodeID, add bool, lbls, ann map[string]string, mutate func(add bool)) []Key {
	var fp fingerprint
	if add {
		fp, st.fpBuf = fingerprintOf(st.fpBuf, st.specs[n].enc, lbls, ann)
		if old, ok := st.fingerprints[n]; ok && old == fp {
			return nil
		}
	} else {
		if _, ok := st.fingerprints[n]; !ok {
			return nil
		}
	}
	ks := keySet{}
	st.subtree(n, ks, topology.Visited{})
	mutate(add)
	if add {
		st.fingerprints[n] = fp
		st.objLabels[n] = lbls
	} else {
		delete(st.fingerprints, n)
		delete(st.objLabels, n)
	}
	st.subtree(n, ks, topology.Visited{})
	st.reresolve(st.att.PoliciesNaming([]topology.NodeID{n}, &n), ks)
	return ks.sorted()
}

func (st *state) applyNamespace(name string, add bool, lbls map[string]string) []Key {
	old, had := st.graph.NSLabels[name]
	if add && had && reflect.DeepEqual(old, lbls) {
		return nil
	}
	if !add && !had {
		return nil
	}
	ks := keySet{}
	// Labels decide which routes and ListenerSets listeners admit.
	affectNS := func() {
		for c := range st.graph.ByNS[name] {
			if topology.IsRouteGK(c.GK()) || topology.IsListenerSetGK(c.GK()) {
				st.subtree(c, ks, topology.Visited{})
			}
		}
	}
	affectNS()
	st.graph.ApplyNamespace(name, add, lbls)
	affectNS()
	st.reresolve(st.att.AffectedByNamespace(name), ks)
	return ks.sorted()
}

func (st *state) applyGrant(ns, name string, add bool, spec map[string]interface{}) []Key {
	if !st.graph.Grants.Apply(ns, name, add, spec) {
		return nil
	}
	ks := keySet{}
	st.crossNSBackends(ns, ks)
	st.reresolve(st.att.AffectedByGrant(ns), ks)
	return ks.sorted()
}

// crossNSBackends adds the subtrees of the backends in namespace ns that routes of other
// namespaces reference: a ReferenceGrant there decides whether they hang under those routes.
func (st *state) crossNSBackends(ns string, ks keySet) {
	seen := topology.Visited{}
	for b := range st.graph.ByNS[ns] {
		for p := range st.graph.BackendParents[b] {
			if p.Namespace != ns {
				st.subtree(b, ks, seen)
				break
			}
		}
	}
}

// Package offline answers the kubectl plugin's questions from manifests,
// with no cluster: the EffectivePolicies (docs/spec.md §5), PolicyReaches (§8) and
// RequestTraces (§9) the server would serve for those objects. It runs the
// server's own code on them — the engine (pkg/compute), the reaches read
// off its outputs (pkg/reach) and the trace through its topology view
// (pkg/requesttrace) — so that the two cannot disagree; only the live
// layer's machinery (informers, stores, watch) is left out. Everything is
// visible: there is no caller to hide anything from.
package offline

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/inputs"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/reach"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/requesttrace"
)

// Cluster is the computed state of a set of objects.
type Cluster struct {
	engine  *compute.Engine
	keys    []compute.Key // of the outputs, sorted
	outputs map[compute.Key]runtime.Object
	reaches *reach.Index
}

// New feeds objs to a new engine — the CustomResourceDefinitions first, so
// that policy kinds are known whatever the file order, then the rest in
// order — and computes every output. The objects must carry the
// creationTimestamps that order them (pkg/cli/manifests stamps them).
func New(objs []*unstructured.Unstructured, opts compute.Options) (*Cluster, error) {
	panics := compute.RecoveredPanics()
	e, err := compute.NewEngine(opts)
	if err != nil {
		return nil, err
	}
	// Bulk mode: the keys each Upsert would return are not needed, every
	// key is computed below.
	e.SetBulk(true)
	for _, crds := range []bool{true, false} {
		for _, o := range objs {
			if isCRD(o) == crds {
				e.Upsert(o)
			}
		}
	}
	e.SetBulk(false)
	if n := compute.RecoveredPanics() - panics; n > 0 {
		return nil, fmt.Errorf("the computation recovered from %d panics reading the manifests (a bug: please report it)", n)
	}
	c := &Cluster{engine: e, outputs: map[compute.Key]runtime.Object{}, reaches: reach.NewIndex()}
	for _, k := range e.Keys() {
		obj, ok := e.Compute(k)
		if !ok {
			continue
		}
		c.keys = append(c.keys, k)
		c.outputs[k] = obj
		c.reaches.Set(k, reach.FromOutput(obj))
	}
	return c, nil
}

func isCRD(o *unstructured.Unstructured) bool {
	gvk := o.GroupVersionKind()
	return gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition"
}

// EffectivePolicy returns the EffectivePolicy namespace/name, or the
// ClusterEffectivePolicy name when namespace is ""; ok=false when no
// policy reaches an object of that name. The object is the caller's.
func (c *Cluster) EffectivePolicy(namespace, name string) (runtime.Object, bool) {
	obj, ok := c.outputs[compute.Key{Namespace: namespace, Name: name}]
	if !ok {
		return nil, false
	}
	return obj.DeepCopyObject(), true
}

// EffectivePolicies lists the EffectivePolicies of namespace (every
// namespace when namespace is "") or, when cluster is set, the
// ClusterEffectivePolicies; sorted by namespace and name.
func (c *Cluster) EffectivePolicies(namespace string, cluster bool) []runtime.Object {
	var out []runtime.Object
	for _, k := range c.keys {
		if match(k, namespace, cluster) {
			out = append(out, c.outputs[k].DeepCopyObject())
		}
	}
	return out
}

func match(k compute.Key, namespace string, cluster bool) bool {
	if cluster {
		return k.Namespace == ""
	}
	return k.Namespace != "" && (namespace == "" || k.Namespace == namespace)
}

// PolicyReach returns the PolicyReach namespace/name, or the
// ClusterPolicyReach name when namespace is ""; ok=false when there is no
// policy of that name. It is built as the live layer builds it
// (reach.Build from the engine's policies and the outputs' entries).
func (c *Cluster) PolicyReach(namespace, name string) (runtime.Object, bool) {
	k := compute.Key{Namespace: namespace, Name: name}
	return reach.Build(k, c.engine.Policies(k), c.reaches.Of(k))
}

// PolicyReaches lists the PolicyReaches of namespace (every namespace when
// namespace is "") or, when cluster is set, the ClusterPolicyReaches;
// sorted by namespace and name.
func (c *Cluster) PolicyReaches(namespace string, cluster bool) []runtime.Object {
	var out []runtime.Object
	for _, k := range c.engine.PolicyKeys() {
		if !match(k, namespace, cluster) {
			continue
		}
		if obj, ok := c.PolicyReach(k.Namespace, k.Name); ok {
			out = append(out, obj)
		}
	}
	return out
}

// Trace answers a RequestTrace as the server would (requesttrace.Answer),
// with everything visible. It must be valid (the server validates it; so
// does the plugin before it calls Trace); spec.gateway naming no Gateway is
// an Invalid error on that field.
func (c *Cluster) Trace(rt *v1alpha1.RequestTrace) (*v1alpha1.RequestTrace, error) {
	return requesttrace.Answer(c.engine, rt, requesttrace.Caller{
		Effective: func(namespace, name string) []v1alpha1.Target {
			return targets(c.outputs[compute.Key{Namespace: namespace, Name: name}])
		},
	})
}

func targets(obj runtime.Object) []v1alpha1.Target {
	switch o := obj.(type) {
	case *v1alpha1.EffectivePolicy:
		return o.Targets
	case *v1alpha1.ClusterEffectivePolicy:
		return o.Targets
	}
	return nil
}

// Review answers a proposed change as the server's live layer does
// (review.Source): the proposal's objects trimmed as informers trim
// them, then the engine's WhatIf — applied, computed and put back, so the
// cluster answers as before afterwards. A proposed object that exists keeps
// its creationTimestamp; a new one is stamped now, newer than any the
// manifests give.
func (c *Cluster) Review(_ context.Context, p compute.Proposal) ([]compute.Outcome, error) {
	trimmed := compute.Proposal{Delete: p.Delete, Apply: make([]*unstructured.Unstructured, len(p.Apply))}
	for i, o := range p.Apply {
		trimmed.Apply[i] = inputs.Trim(o, o.GroupVersionKind())
	}
	return c.engine.WhatIf(trimmed)
}

// Diff compares two computed sets of objects: for every EffectivePolicy
// and ClusterEffectivePolicy either computes, the output of before and of
// after (nil where one has none), sorted by namespace and name — the
// outcomes a review turning before's objects into after's would compute
// (some may be equal). The outputs are shared with the clusters: read only.
func Diff(before, after *Cluster) []compute.Outcome {
	keys := make(map[compute.Key]bool, len(before.keys)+len(after.keys))
	for _, k := range before.keys {
		keys[k] = true
	}
	for _, k := range after.keys {
		keys[k] = true
	}
	out := make([]compute.Outcome, 0, len(keys))
	for k := range keys {
		out = append(out, compute.Outcome{Key: k, Before: before.outputs[k], After: after.outputs[k]})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Key, out[j].Key
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return out
}

// Attached lists the routes attached to the Gateway namespace/name —
// through the listener named section, or through any of its listeners
// (its ListenerSets' too) when section is "" — by the hierarchy's rules
// (docs/spec.md §3: parentRefs, allowedRoutes, hostnames), sorted and
// without repeats; ok=false when there is no such Gateway.
func (c *Cluster) Attached(namespace, name, section string) (routes []v1alpha1.ObjectReference, ok bool) {
	c.engine.View(func(v compute.View) {
		gws := v.Gateways(namespace, name)
		if len(gws) == 0 {
			return
		}
		ok = true
		seen := map[v1alpha1.ObjectReference]bool{}
		for _, l := range gws[0].Listeners {
			if section != "" && l.Name != section {
				continue
			}
			got, _ := v.Routes(l, nil)
			for _, r := range got {
				if !seen[r.Ref] {
					seen[r.Ref] = true
					routes = append(routes, r.Ref)
				}
			}
		}
	})
	sort.Slice(routes, func(i, j int) bool {
		a, b := routes[i], routes[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Group+"/"+a.Kind < b.Group+"/"+b.Kind
	})
	return routes, ok
}

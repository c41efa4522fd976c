// Package kinds resolves a kind as a kubectl user types it (HTTPRoute,
// httproute, httproutes, a short name like svc, or a resource with its
// group, httproutes.gateway.networking.k8s.io) to its group, kind and
// scope. The plugin needs the scope to know which object to read: a
// cluster-scoped target's EffectivePolicy is a ClusterEffectivePolicy, a
// cluster-scoped policy's PolicyReach a ClusterPolicyReach.
//
// A Table knows the kinds of the Gateway API hierarchy and any
// CustomResourceDefinitions it is given (offline: those of the manifests);
// against a cluster, the cluster's RESTMapper answers first (Mapper).
package kinds

import (
	"fmt"
	"slices"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kind is one kind and the names it answers to.
type Kind struct {
	Group, Kind      string
	Plural, Singular string
	ShortNames       []string
	Namespaced       bool
}

// GroupKind returns the kind's group and kind.
func (k Kind) GroupKind() schema.GroupKind { return schema.GroupKind{Group: k.Group, Kind: k.Kind} }

// String is the kind as kubectl prints a resource: Kind.group, or Kind
// for the core group.
func (k Kind) String() string {
	if k.Group == "" {
		return k.Kind
	}
	return k.Kind + "." + k.Group
}

// Resolver resolves what the user typed for a kind: every kind that
// answers to it (ColorPolicy may be the kind of two groups), the one the
// resolver prefers first.
type Resolver interface {
	Resolve(arg string) ([]Kind, error)
	// Namespaced reports whether gk is namespaced; ok=false when the
	// resolver does not know gk.
	Namespaced(gk schema.GroupKind) (namespaced, ok bool)
}

const (
	gw  = "gateway.networking.k8s.io"
	gwx = "gateway.networking.x-k8s.io"
)

// hierarchy are the kinds of the hierarchy (docs/spec.md §3) and the ReferenceGrant,
// with the short names their CRDs declare.
var hierarchy = []Kind{
	{Kind: "Namespace", Plural: "namespaces", ShortNames: []string{"ns"}},
	{Kind: "Service", Plural: "services", ShortNames: []string{"svc"}, Namespaced: true},
	{Group: gw, Kind: "GatewayClass", Plural: "gatewayclasses", ShortNames: []string{"gc"}},
	{Group: gw, Kind: "Gateway", Plural: "gateways", ShortNames: []string{"gtw"}, Namespaced: true},
	{Group: gw, Kind: "ListenerSet", Plural: "listenersets", ShortNames: []string{"lset"}, Namespaced: true},
	{Group: gwx, Kind: "XListenerSet", Plural: "xlistenersets", ShortNames: []string{"lset"}, Namespaced: true},
	{Group: gw, Kind: "HTTPRoute", Plural: "httproutes", Namespaced: true},
	{Group: gw, Kind: "GRPCRoute", Plural: "grpcroutes", Namespaced: true},
	{Group: gw, Kind: "TLSRoute", Plural: "tlsroutes", Namespaced: true},
	{Group: gw, Kind: "TCPRoute", Plural: "tcproutes", Namespaced: true},
	{Group: gw, Kind: "UDPRoute", Plural: "udproutes", Namespaced: true},
	{Group: gw, Kind: "ReferenceGrant", Plural: "referencegrants", ShortNames: []string{"refgrant"}, Namespaced: true},
}

// Table resolves kinds from a list.
type Table struct{ kinds []Kind }

// NewTable returns a table of the hierarchy's kinds.
func NewTable() *Table {
	t := &Table{kinds: make([]Kind, len(hierarchy))}
	copy(t.kinds, hierarchy)
	return t
}

// AddCRDs adds the kinds the CustomResourceDefinitions among objs define
// (other objects are skipped). A CRD's kind is put first, so that it wins
// over a built-in kind of the same name, as the cluster's would.
func (t *Table) AddCRDs(objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		if o.GroupVersionKind().GroupKind() != (schema.GroupKind{Group: apiextv1.GroupName, Kind: "CustomResourceDefinition"}) {
			continue
		}
		var crd apiextv1.CustomResourceDefinition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &crd); err != nil {
			return fmt.Errorf("CustomResourceDefinition %s: %w", o.GetName(), err)
		}
		n := crd.Spec.Names
		k := Kind{
			Group: crd.Spec.Group, Kind: n.Kind, Plural: n.Plural, Singular: n.Singular,
			ShortNames: n.ShortNames, Namespaced: crd.Spec.Scope != apiextv1.ClusterScoped,
		}
		t.kinds = slices.Insert(t.kinds, 0, k)
	}
	return nil
}

// Namespaced reports whether gk is namespaced; ok=false when the table does
// not know gk.
func (t *Table) Namespaced(gk schema.GroupKind) (namespaced, ok bool) {
	for _, k := range t.kinds {
		if k.GroupKind() == gk {
			return k.Namespaced, true
		}
	}
	return false, false
}

// Resolve finds the kinds arg names: a kind, plural, singular or short
// name, case-insensitively, optionally followed by "." and the group.
func (t *Table) Resolve(arg string) ([]Kind, error) {
	name, group, qualified := strings.Cut(strings.ToLower(arg), ".")
	var out []Kind
	for _, k := range t.kinds {
		if qualified && !strings.EqualFold(k.Group, group) {
			continue
		}
		if k.answersTo(name) {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("unknown kind %q", arg)
	}
	return out, nil
}

func (k Kind) answersTo(name string) bool {
	if strings.EqualFold(k.Kind, name) || name == k.Plural || name == k.Singular {
		return true
	}
	for _, s := range k.ShortNames {
		if name == s {
			return true
		}
	}
	return false
}

// Mapper resolves kinds with a cluster's RESTMapper, and with Fallback
// for what the cluster does not serve (a virtual target, docs/spec.md §3, has an
// EffectivePolicy although no API serves its kind).
type Mapper struct {
	Mapper   meta.RESTMapper
	Fallback Resolver
}

// Resolve implements Resolver.
func (m Mapper) Resolve(arg string) ([]Kind, error) {
	gvr, gr := schema.ParseResourceArg(strings.ToLower(arg))
	var (
		gvks []schema.GroupVersionKind
		err  error
	)
	if gvr != nil {
		gvks, err = m.Mapper.KindsFor(*gvr)
	}
	if gvr == nil || err != nil || len(gvks) == 0 {
		gvks, err = m.Mapper.KindsFor(gr.WithVersion(""))
	}
	var out []Kind
	for _, gvk := range gvks {
		if slices.ContainsFunc(out, func(k Kind) bool { return k.GroupKind() == gvk.GroupKind() }) {
			continue // another version of a kind already found
		}
		mapping, merr := m.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if merr != nil {
			err = merr
			continue
		}
		out = append(out, Kind{
			Group: gvk.Group, Kind: gvk.Kind, Plural: mapping.Resource.Resource,
			Namespaced: mapping.Scope.Name() == meta.RESTScopeNameNamespace,
		})
	}
	if len(out) > 0 {
		return out, nil
	}
	if m.Fallback != nil {
		if ks, ferr := m.Fallback.Resolve(arg); ferr == nil {
			return ks, nil
		}
	}
	return nil, fmt.Errorf("unknown kind %q: %w", arg, err)
}

// Namespaced implements Resolver: the cluster's scope of gk, else
// Fallback's.
func (m Mapper) Namespaced(gk schema.GroupKind) (namespaced, ok bool) {
	if mapping, err := m.Mapper.RESTMapping(gk); err == nil {
		return mapping.Scope.Name() == meta.RESTScopeNameNamespace, true
	}
	if m.Fallback != nil {
		return m.Fallback.Namespaced(gk)
	}
	return false, false
}

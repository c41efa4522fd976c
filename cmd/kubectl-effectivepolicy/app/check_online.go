package app

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/check"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/manifests"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/offline"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// onlineCheck answers check from the cluster, with the user's
// credentials: the EffectivePolicies, the targets' metadata (for labels),
// and the Gateway API objects that decide which routes a Gateway attaches
// — computed by the same engine as offline, so that attachedTo means the
// same online and off (docs/spec.md §3).
type onlineCheck struct {
	src      Source
	mapper   meta.RESTMapper
	dynamic  dynamic.Interface
	metadata metadata.Interface

	// topology is the Gateway API objects' hierarchy, read once.
	topology *offline.Cluster
	byKey    map[manifests.Key]*unstructured.Unstructured
}

func (c *checkOptions) onlineCheckSource() (check.Source, error) {
	src, err := c.newOnline(c.Options)
	if err != nil {
		return nil, err
	}
	cfg, err := c.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	mapper, err := c.ConfigFlags.ToRESTMapper()
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &onlineCheck{src: src, mapper: mapper, dynamic: dyn, metadata: md}, nil
}

func (s *onlineCheck) Effective(ctx context.Context, namespace string) ([]check.Reached, error) {
	list, err := s.src.EffectivePolicies(ctx, namespace, false)
	if err != nil {
		return nil, fmt.Errorf("listing EffectivePolicies: %w", err)
	}
	objs := listItems(list)
	if namespace == "" {
		cl, err := s.src.EffectivePolicies(ctx, "", true)
		if err != nil {
			return nil, fmt.Errorf("listing ClusterEffectivePolicies: %w", err)
		}
		objs = append(objs, listItems(cl)...)
	}
	return reachedOf(objs), nil
}

// Objects lists the metadata of the objects of the kind; served=false
// when the cluster serves no such kind.
func (s *onlineCheck) Objects(ctx context.Context, group *string, kind, namespace string) ([]check.Object, bool, error) {
	mappings, err := s.mappings(group, kind)
	if err != nil || len(mappings) == 0 {
		return nil, false, err
	}
	var out []check.Object
	for _, m := range mappings {
		ns := namespace
		if m.Scope.Name() != meta.RESTScopeNameNamespace {
			ns = ""
		}
		list, err := s.metadata.Resource(m.Resource).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, false, fmt.Errorf("listing %s: %w", m.Resource.GroupResource(), err)
		}
		for _, item := range list.Items {
			out = append(out, check.Object{
				Target: check.Target{Group: m.GroupVersionKind.Group, Kind: m.GroupVersionKind.Kind, Namespace: item.Namespace, Name: item.Name},
				Labels: item.Labels,
			})
		}
	}
	return out, true, nil
}

// mappings are the cluster's resources of the kind (in group; nil: every
// group that has the kind).
func (s *onlineCheck) mappings(group *string, kind string) ([]*meta.RESTMapping, error) {
	if group != nil {
		m, err := s.mapper.RESTMapping(schema.GroupKind{Group: *group, Kind: kind})
		if meta.IsNoMatchError(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return []*meta.RESTMapping{m}, nil
	}
	gvks, err := s.mapper.KindsFor(schema.GroupVersionResource{Resource: kindResource(kind)})
	if meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*meta.RESTMapping
	seen := map[schema.GroupKind]bool{}
	for _, gvk := range gvks {
		if gvk.Kind != kind || seen[gvk.GroupKind()] {
			continue
		}
		seen[gvk.GroupKind()] = true
		m, err := s.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// kindResource is the singular resource a RESTMapper resolves for a kind.
func kindResource(kind string) string {
	b := []byte(kind)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func (s *onlineCheck) Attached(ctx context.Context, gw check.GatewayRef) ([]check.Object, bool, error) {
	if s.topology == nil {
		if err := s.readTopology(ctx); err != nil {
			return nil, false, err
		}
	}
	routes, ok := attached(s.topology, gw, s.byKey)
	return routes, ok, nil
}

// topologyKinds are what decides which routes a Gateway attaches: the
// Gateways, their ListenerSets, the routes, and the Namespaces (whose
// labels allowedRoutes selects by). Kinds the cluster does not serve are
// left out.
var topologyKinds = []schema.GroupKind{
	{Kind: "Namespace"},
	{Group: "gateway.networking.k8s.io", Kind: "Gateway"},
	{Group: "gateway.networking.k8s.io", Kind: "ListenerSet"},
	{Group: "gateway.networking.x-k8s.io", Kind: "XListenerSet"},
	{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute"},
	{Group: "gateway.networking.k8s.io", Kind: "GRPCRoute"},
	{Group: "gateway.networking.k8s.io", Kind: "TLSRoute"},
	{Group: "gateway.networking.k8s.io", Kind: "TCPRoute"},
	{Group: "gateway.networking.k8s.io", Kind: "UDPRoute"},
}

// readTopology lists the topology's objects in every namespace and
// computes their hierarchy.
func (s *onlineCheck) readTopology(ctx context.Context) error {
	var objs []*unstructured.Unstructured
	for _, gk := range topologyKinds {
		m, err := s.mapper.RESTMapping(gk)
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return err
		}
		list, err := s.dynamic.Resource(m.Resource).List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("attachedTo reads the Gateway API objects of every namespace: listing %s: %w", m.Resource.GroupResource(), err)
		}
		for i := range list.Items {
			objs = append(objs, &list.Items[i])
		}
	}
	cluster, err := offline.New(objs, compute.Options{})
	if err != nil {
		return err
	}
	s.topology, s.byKey = cluster, map[manifests.Key]*unstructured.Unstructured{}
	for _, u := range objs {
		s.byKey[manifests.KeyOf(u)] = u
	}
	return nil
}

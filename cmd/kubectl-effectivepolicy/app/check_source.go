package app

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/check"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/manifests"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/offline"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/render"
)

// offlineCheck answers check from manifests: the EffectivePolicies the
// server would compute, the manifests' objects, and the routes the
// engine's hierarchy attaches to a Gateway.
type offlineCheck struct {
	cluster *offline.Cluster
	objs    []*unstructured.Unstructured
	byKey   map[manifests.Key]*unstructured.Unstructured
}

func (c *checkOptions) offlineCheckSource(objs []*unstructured.Unstructured) (check.Source, error) {
	s, all, err := offlineSourceOf(c.Options, objs)
	if err != nil {
		return nil, err
	}
	oc := &offlineCheck{cluster: s.cluster, objs: all, byKey: map[manifests.Key]*unstructured.Unstructured{}}
	for _, u := range all {
		oc.byKey[manifests.KeyOf(u)] = u
	}
	return oc, nil
}

func (s *offlineCheck) Effective(_ context.Context, namespace string) ([]check.Reached, error) {
	objs := s.cluster.EffectivePolicies(namespace, false)
	if namespace == "" {
		objs = append(objs, s.cluster.EffectivePolicies("", true)...)
	}
	return reachedOf(objs), nil
}

// Objects lists the manifests' objects of the kind; every kind counts as
// served (offline, an object that the manifests do not hold does not
// exist, virtual or not).
func (s *offlineCheck) Objects(_ context.Context, group *string, kind, namespace string) ([]check.Object, bool, error) {
	var out []check.Object
	for _, u := range s.objs {
		gk := u.GroupVersionKind().GroupKind()
		if gk.Kind != kind || group != nil && *group != gk.Group || namespace != "" && u.GetNamespace() != namespace {
			continue
		}
		out = append(out, objectOf(u))
	}
	return out, true, nil
}

func (s *offlineCheck) Attached(_ context.Context, gw check.GatewayRef) ([]check.Object, bool, error) {
	routes, ok := attached(s.cluster, gw, s.byKey)
	return routes, ok, nil
}

// attached lists the routes attached to gw in cluster, with the labels of
// their objects in byKey; ok=false when there is no such Gateway.
func attached(cluster *offline.Cluster, gw check.GatewayRef, byKey map[manifests.Key]*unstructured.Unstructured) ([]check.Object, bool) {
	refs, ok := cluster.Attached(gw.Namespace, gw.Name, gw.SectionName)
	out := make([]check.Object, 0, len(refs))
	for _, r := range refs {
		o := check.Object{Target: check.Target{Group: r.Group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}}
		if u := byKey[manifests.Key{Group: r.Group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}]; u != nil {
			o.Labels = u.GetLabels()
		}
		out = append(out, o)
	}
	return out, ok
}

func objectOf(u *unstructured.Unstructured) check.Object {
	gk := u.GroupVersionKind().GroupKind()
	return check.Object{
		Target: check.Target{Group: gk.Group, Kind: gk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()},
		Labels: u.GetLabels(),
	}
}

// reachedOf lists the targets of EffectivePolicies and
// ClusterEffectivePolicies.
func reachedOf(objs []runtime.Object) []check.Reached {
	var out []check.Reached
	for _, obj := range objs {
		namespace, targets := render.TargetsOf(obj)
		for _, t := range targets {
			out = append(out, check.Reached{Namespace: namespace, Target: t})
		}
	}
	return out
}

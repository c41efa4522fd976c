package differential

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/offline"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// Ours is this project's answer for a set of objects: the offline engine
// (pkg/cli/offline, the plugin's mode without a cluster), which runs the
// server's computation.
type Ours struct {
	c *offline.Cluster
}

// ComputeOurs computes every EffectivePolicy of objs, which must carry their
// creationTimestamps and CRDs.
func ComputeOurs(objs []*unstructured.Unstructured) (*Ours, error) {
	c, err := offline.New(objs, compute.Options{})
	if err != nil {
		return nil, err
	}
	return &Ours{c: c}, nil
}

// Node is an attachment point on a path: an object, or a section of it.
type Node struct {
	Kind, Namespace, Name, Section string
}

// TargetPolicy returns our entry for policy kind on target (kind, namespace, name), or nil.
func (o *Ours) TargetPolicy(t Node, policyGroup, policyKind string) *v1alpha1.TargetPolicy {
	obj, ok := o.c.EffectivePolicy(t.Namespace, t.Name)
	if !ok {
		return nil
	}
	ep, ok := obj.(*v1alpha1.EffectivePolicy)
	if !ok {
		return nil
	}
	for i := range ep.Targets {
		tg := &ep.Targets[i]
		if tg.Kind != t.Kind {
			continue
		}
		for j := range tg.Policies {
			if p := &tg.Policies[j]; p.Group == policyGroup && p.Kind == policyKind {
				return p
			}
		}
	}
	return nil
}

// Effective returns the effective spec of policy kind on target t (t.Section
// is the section asked for, "" for the whole object) in the context whose
// attachment points are path: the entry of that section (or of the whole
// object when no policy names the section) whose via lies on path and is
// the longest such (via lists only the nodes policies attach to, so the
// context's own entry is the longest one on its path). nil: no policy.
func (o *Ours) Effective(t Node, policyGroup, policyKind string, path []Node) (map[string]any, map[string]string, error) {
	best := o.entry(t, policyGroup, policyKind, path)
	if best == nil {
		return nil, nil, nil
	}
	var spec map[string]any
	if err := json.Unmarshal(best.Spec.Raw, &spec); err != nil {
		return nil, nil, fmt.Errorf("%s %s/%s %s: %w", t.Kind, t.Namespace, t.Name, policyKind, err)
	}
	return spec, best.FieldSources, nil
}

// Ordered is, for a kind whose policies all apply (its effective spec a
// list), the policies of the list's items in order ("namespace/name"),
// nil when no policy of the kind applies on the path.
func (o *Ours) Ordered(t Node, policyGroup, policyKind string, path []Node) []string {
	best := o.entry(t, policyGroup, policyKind, path)
	if best == nil {
		return nil
	}
	var out []string
	for i := 0; ; i++ {
		src, ok := best.FieldSources[fmt.Sprintf("/%d", i)]
		if !ok {
			return out
		}
		out = append(out, src)
	}
}

// entry is our effective entry of policy kind on t for the context on
// path: of section t.Section if it has one, else of the whole object; the
// one whose via holds most of path.
func (o *Ours) entry(t Node, policyGroup, policyKind string, path []Node) *v1alpha1.EffectiveSpec {
	tp := o.TargetPolicy(t, policyGroup, policyKind)
	if tp == nil {
		return nil
	}
	for _, section := range []string{t.Section, ""} {
		var best *v1alpha1.EffectiveSpec
		for i := range tp.Effective {
			e := &tp.Effective[i]
			if e.SectionName != section || !onPath(e.Via, path, t.Namespace) {
				continue
			}
			if best == nil || len(e.Via) > len(best.Via) {
				best = e
			}
		}
		if best != nil || section == "" {
			return best
		}
	}
	return nil
}

func onPath(via []v1alpha1.ObjectReference, path []Node, ns string) bool {
	for _, v := range via {
		vns := v.Namespace
		if vns == "" {
			vns = ns
		}
		found := false
		for _, n := range path {
			if n.Kind == v.Kind && n.Name == v.Name && n.Section == v.SectionName && (v.Namespace == "" || n.Namespace == vns) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// Outcomes returns, for every policy of group (namespace/name), the outcomes
// our sources give it over every target, by target "Kind namespace/name".
func (o *Ours) Outcomes(group string) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, obj := range o.c.EffectivePolicies("", false) {
		ep, ok := obj.(*v1alpha1.EffectivePolicy)
		if !ok {
			continue
		}
		for _, tg := range ep.Targets {
			for _, p := range tg.Policies {
				if p.Group != group {
					continue
				}
				for _, s := range p.Sources {
					id := s.Namespace + "/" + s.Name
					if out[id] == nil {
						out[id] = map[string]string{}
					}
					out[id][tg.Kind+" "+ep.Namespace+"/"+tg.Name] = string(s.Outcome)
				}
			}
		}
	}
	return out
}

// ByKey are our EffectivePolicies by key, as compute.ComputeAll returns
// them.
func (o *Ours) ByKey() map[compute.Key]runtime.Object {
	out := map[compute.Key]runtime.Object{}
	for _, obj := range o.c.EffectivePolicies("", false) {
		if ep, ok := obj.(*v1alpha1.EffectivePolicy); ok {
			out[compute.Key{Namespace: ep.Namespace, Name: ep.Name}] = ep
		}
	}
	return out
}

package differential

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/internal/scenariofile"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// expected is the expected.json of a case (internal/scenariofile), as our
// engine answers it, with the checks already written.
type expected struct {
	scenariofile.Expected
	seen map[string]bool
}

// OurExpected is our answer on the checks diff as an expected.json: for a
// check of a policy's outcome, that policy's outcome on every target our
// engine gives it one (and, where it gives none, how many entries of the
// kind each target it names has); for a check of a context, our effective
// entry there (spec and fieldSources), or that the target has no entry of
// the kind, or no EffectivePolicy at all.
func OurExpected(o Oracle, objs []*unstructured.Unstructured, diff []Check) (any, error) {
	in, err := o.Ours(objs)
	if err != nil {
		return nil, err
	}
	ours, err := ComputeOurs(in)
	if err != nil {
		return nil, err
	}
	exp := &expected{Expected: scenariofile.Expected{Absent: []scenariofile.Name{}, Effective: []scenariofile.Effective{}, Sources: []scenariofile.Source{}}, seen: map[string]bool{}}
	for _, c := range diff {
		group := groupOf(objs, c.Kind)
		if c.Policy != "" {
			if !exp.addSources(ours, group, c) {
				exp.addTargetCounts(ours, objs, group, c)
			}
			continue
		}
		if c.Target == (Node{}) {
			return nil, fmt.Errorf("%s: a check of neither a policy nor a target", c)
		}
		if e := ours.entry(c.Target, group, c.Kind, c.Path); e != nil {
			exp.addEffective(c, group, e)
			continue
		}
		exp.addCount(ours, c.Target, group, c.Kind)
	}
	return exp, nil
}

func (exp *expected) once(key string) bool {
	if exp.seen[key] {
		return false
	}
	exp.seen[key] = true
	return true
}

func (exp *expected) addEffective(c Check, group string, e *v1alpha1.EffectiveSpec) {
	via := []scenariofile.Ref{}
	for _, v := range e.Via {
		via = append(via, scenariofile.Ref{Kind: v.Kind, Name: v.Name, SectionName: v.SectionName})
	}
	if !exp.once(fmt.Sprint("effective", c.Target.Kind, c.Target.Namespace, c.Target.Name, c.Kind, via, e.SectionName)) {
		return
	}
	exp.Effective = append(exp.Effective, scenariofile.Effective{Namespace: c.Target.Namespace, Name: c.Target.Name,
		Target: scenariofile.Target{Kind: c.Target.Kind}, Policy: scenariofile.Policy{Group: group, Kind: c.Kind}, Via: via, SectionName: e.SectionName,
		Spec: json.RawMessage(e.Spec.Raw), FieldSources: e.FieldSources})
}

// addSources adds the outcomes our sources give the policy of c, and says
// whether there was one.
func (exp *expected) addSources(ours *Ours, group string, c Check) bool {
	found := false
	for _, obj := range ours.c.EffectivePolicies("", false) {
		ep, ok := obj.(*v1alpha1.EffectivePolicy)
		if !ok {
			continue
		}
		for _, tg := range ep.Targets {
			for _, p := range tg.Policies {
				if p.Group != group || p.Kind != c.Kind {
					continue
				}
				for _, s := range p.Sources {
					if s.Namespace+"/"+s.Name != c.Policy {
						continue
					}
					found = true
					if exp.once(fmt.Sprint("source", ep.Namespace, ep.Name, tg.Kind, c.Kind, c.Policy)) {
						exp.Sources = append(exp.Sources, scenariofile.Source{Namespace: ep.Namespace, Name: ep.Name,
							Target: scenariofile.Target{Kind: tg.Kind}, Policy: scenariofile.Policy{Group: group, Kind: c.Kind}, Source: c.Policy, Outcome: string(s.Outcome)})
					}
				}
			}
		}
	}
	return found
}

// addTargetCounts: for a policy we give no outcome anywhere, what each
// target it names has of its kind.
func (exp *expected) addTargetCounts(ours *Ours, objs []*unstructured.Unstructured, group string, c Check) {
	for _, p := range objs {
		if p.GetKind() != c.Kind || p.GetNamespace()+"/"+p.GetName() != c.Policy {
			continue
		}
		refs, _, _ := unstructured.NestedSlice(p.Object, "spec", "targetRefs")
		if ref, ok, _ := unstructured.NestedMap(p.Object, "spec", "targetRef"); ok {
			refs = append(refs, ref)
		}
		for _, r := range refs {
			m, _ := r.(map[string]any)
			k, _ := m["kind"].(string)
			n, _ := m["name"].(string)
			exp.addCount(ours, Node{Kind: k, Namespace: p.GetNamespace(), Name: n}, group, c.Kind)
		}
	}
}

// addCount says how many entries of kind target has (none without one),
// or that it has no EffectivePolicy.
func (exp *expected) addCount(ours *Ours, target Node, group, kind string) {
	if !exp.once(fmt.Sprint("count", target.Kind, target.Namespace, target.Name, kind)) {
		return
	}
	if _, ok := ours.c.EffectivePolicy(target.Namespace, target.Name); !ok {
		exp.Absent = append(exp.Absent, scenariofile.Name{Namespace: target.Namespace, Name: target.Name})
		return
	}
	n := 0
	if tp := ours.TargetPolicy(Node{Kind: target.Kind, Namespace: target.Namespace, Name: target.Name}, group, kind); tp != nil {
		n = len(tp.Effective)
	}
	exp.EffectiveCount = append(exp.EffectiveCount, scenariofile.Count{Namespace: target.Namespace, Name: target.Name,
		Target: scenariofile.Target{Kind: target.Kind}, Policy: scenariofile.Policy{Group: group, Kind: kind}, Count: n})
}

// groupOf is the API group of the objects of kind.
func groupOf(objs []*unstructured.Unstructured, kind string) string {
	for _, o := range objs {
		if o.GetKind() == kind {
			return o.GroupVersionKind().Group
		}
	}
	return ""
}

package envoygateway

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// The expected.json of a case (test/upstream/README: absent, effective, sources).
type caseRef struct {
	Kind        string `json:"kind"`
	Name        string `json:"name"`
	SectionName string `json:"sectionName,omitempty"`
}

type caseKind struct {
	Kind string `json:"kind"`
}

type casePolicy struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
}

type caseEffective struct {
	Namespace   string         `json:"namespace"`
	Name        string         `json:"name"`
	Target      caseKind       `json:"target"`
	Policy      casePolicy     `json:"policy"`
	Via         []caseRef      `json:"via"`
	Spec        map[string]any `json:"spec"`
	SectionName string         `json:"sectionName,omitempty"`
}

type caseSource struct {
	Namespace string     `json:"namespace"`
	Name      string     `json:"name"`
	Target    caseKind   `json:"target"`
	Policy    casePolicy `json:"policy"`
	Source    string     `json:"source"`
	Outcome   string     `json:"outcome"`
}

type caseExpected struct {
	Absent    []any           `json:"absent"`
	Effective []caseEffective `json:"effective"`
	Sources   []caseSource    `json:"sources"`
}

// Expected writes Envoy Gateway's answer on the disagreeing checks: for a
// route rule or listener, the effective spec with Envoy Gateway's values
// at the compared fields (our spec elsewhere: the CRD defaults both sides
// add); for a policy Envoy Gateway reports Conflicted, that outcome on its
// single target.
func (e envoyGateway) Expected(objs []*unstructured.Unstructured, diff []differential.Check) (any, error) {
	in, err := e.Ours(objs)
	if err != nil {
		return nil, err
	}
	ours, err := differential.ComputeOurs(in)
	if err != nil {
		return nil, err
	}
	exp := caseExpected{Absent: []any{}, Effective: []caseEffective{}, Sources: []caseSource{}}
	done := map[string]bool{}
	for _, c := range diff {
		if c.Policy != "" {
			if s, ok := conflictSource(objs, c); ok {
				exp.Sources = append(exp.Sources, s)
			}
			continue
		}
		key := c.Kind + " " + c.Subject
		if done[key] {
			continue
		}
		done[key] = true
		spec, _, err := ours.Effective(c.Target, gen.EGGroup, c.Kind, c.Path)
		if err != nil {
			return nil, err
		}
		if spec == nil {
			spec = map[string]any{}
		}
		for _, d := range diff {
			if d.Kind == c.Kind && d.Subject == c.Subject {
				setTheirs(spec, in, d)
			}
		}
		if pruneEmpty(spec) {
			// Envoy Gateway applies nothing here: with one context, the target has no output.
			exp.Absent = append(exp.Absent, map[string]string{"namespace": c.Target.Namespace, "name": c.Target.Name})
			continue
		}
		via, section := policyBearing(objs, c.Kind, c.Path, c.Target)
		exp.Effective = append(exp.Effective, caseEffective{Namespace: c.Target.Namespace, Name: c.Target.Name,
			Target: caseKind{c.Target.Kind}, Policy: casePolicy{gen.EGGroup, c.Kind}, Via: via, Spec: spec, SectionName: section})
	}
	return exp, nil
}

// setTheirs puts Envoy Gateway's value of d's field into spec, as the
// policy it came from wrote it.
func setTheirs(spec map[string]any, objs []*unstructured.Unstructured, d differential.Check) {
	parts := strings.Split(strings.TrimPrefix(d.Field, "/"), "/")
	parent := spec
	for _, p := range parts[:len(parts)-1] {
		next, ok := parent[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			parent[p] = next
		}
		parent = next
	}
	leaf := parts[len(parts)-1]
	if d.Theirs == "" {
		delete(parent, leaf)
		return
	}
	if strings.HasPrefix(d.Theirs, "src:") {
		var items []any
		for _, id := range strings.Split(strings.TrimPrefix(d.Theirs, "src:"), ",") {
			if v, ok := policyValue(objs, d.Kind, id, parts).([]any); ok {
				items = append(items, v...)
			}
		}
		parent[leaf] = items
		return
	}
	parent[leaf] = d.Theirs
	for _, p := range objs {
		if v := policyValue(objs, d.Kind, p.GetNamespace()+"/"+p.GetName(), parts); v != nil && differential.Scalar(v) == d.Theirs {
			parent[leaf] = v
			return
		}
	}
}

func policyValue(objs []*unstructured.Unstructured, kind, id string, parts []string) any {
	for _, p := range objs {
		if p.GetKind() == kind && p.GetNamespace()+"/"+p.GetName() == id {
			v, _, _ := unstructured.NestedFieldCopy(p.Object, append([]string{"spec"}, parts...)...)
			return v
		}
	}
	return nil
}

// policyBearing is the part of path some policy of kind names (its
// namespace's, by targetRefs): the context's via. section is the target's
// section when a policy names it.
func policyBearing(objs []*unstructured.Unstructured, kind string, path []differential.Node, target differential.Node) ([]caseRef, string) {
	named := map[differential.Node]bool{}
	for _, p := range objs {
		if p.GetKind() != kind {
			continue
		}
		refs, _, _ := unstructured.NestedSlice(p.Object, "spec", "targetRefs")
		for _, r := range refs {
			m, _ := r.(map[string]any)
			k, _ := m["kind"].(string)
			n, _ := m["name"].(string)
			s, _ := m["sectionName"].(string)
			named[differential.Node{Kind: k, Namespace: p.GetNamespace(), Name: n, Section: s}] = true
		}
	}
	via := []caseRef{}
	section := ""
	for _, n := range path {
		if named[n] {
			via = append(via, caseRef{n.Kind, n.Name, n.Section})
			if n == target && n.Section != "" {
				section = n.Section
			}
		}
	}
	return via, section
}

// conflictSource is the Conflicted outcome Envoy Gateway gives a policy
// with one target (with several, its status does not say on which).
func conflictSource(objs []*unstructured.Unstructured, c differential.Check) (caseSource, bool) {
	if c.Theirs != "Conflicted" {
		return caseSource{}, false
	}
	for _, p := range objs {
		if p.GetKind() != c.Kind || p.GetNamespace()+"/"+p.GetName() != c.Policy {
			continue
		}
		refs, _, _ := unstructured.NestedSlice(p.Object, "spec", "targetRefs")
		if len(refs) != 1 {
			return caseSource{}, false
		}
		m, _ := refs[0].(map[string]any)
		k, _ := m["kind"].(string)
		n, _ := m["name"].(string)
		return caseSource{Namespace: p.GetNamespace(), Name: n, Target: caseKind{k},
			Policy: casePolicy{gen.EGGroup, c.Kind}, Source: c.Policy, Outcome: "Conflicted"}, true
	}
	return caseSource{}, false
}

// pruneEmpty drops the empty objects of m, and says whether m is empty then.
func pruneEmpty(m map[string]any) bool {
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok && pruneEmpty(sub) {
			delete(m, k)
		}
	}
	return len(m) == 0
}

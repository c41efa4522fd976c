package requesttrace

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// lookup is the effective policy to pick for one context of a match: the
// rule's (backend nil) or a backend's.
type lookup struct {
	match   int                       // index in status.matches
	backend *v1alpha1.ObjectReference // the backend, for backendPolicies
	target  v1alpha1.ObjectReference  // the route or backend object
	section string                    // the rule's or port's section name
	path    []v1alpha1.ObjectReference
	vias    []compute.KindVia
}

// policies picks, per policy kind in the target's EffectivePolicy, the
// effective entry of this context: for an Inherited kind the entry whose via
// is the path's (the section's entry when a policy targets the section,
// else the whole target's); for a Direct kind the section's entry, else the
// whole target's (only policies on the target itself count, whatever the
// path). A kind with no entry of this context is left out: nothing of it
// takes effect here.
func (l lookup) policies(caller Caller) []v1alpha1.TracePolicy {
	if caller.Effective == nil {
		return nil
	}
	targets := caller.Effective(l.target.Namespace, l.target.Name)
	var t *v1alpha1.Target
	for i := range targets {
		if targets[i].Group == l.target.Group && targets[i].Kind == l.target.Kind && targets[i].Name == l.target.Name {
			t = &targets[i]
			break
		}
	}
	if t == nil {
		return nil
	}
	onPath := l.pathSet()
	var out []v1alpha1.TracePolicy
	for i := range t.Policies {
		tp := &t.Policies[i]
		e := l.entry(tp)
		if e == nil {
			continue
		}
		p := v1alpha1.TracePolicy{
			Backend: l.backend, Group: tp.Group, Kind: tp.Kind, Class: tp.Class, Semantics: tp.Semantics,
			Via: e.Via, SectionName: e.SectionName, Spec: e.Spec, FieldSources: e.FieldSources,
		}
		for _, s := range tp.Sources {
			if onPath[refKey(s.AttachedTo)] {
				p.Sources = append(p.Sources, s)
			}
		}
		out = append(out, p)
	}
	return out
}

// entry returns tp's effective entry for this context, nil when none.
func (l lookup) entry(tp *v1alpha1.TargetPolicy) *v1alpha1.EffectiveSpec {
	if tp.Class == v1alpha1.ClassDirect {
		if e := findEntry(tp, l.section, nil); e != nil {
			return e
		}
		return findEntry(tp, "", nil)
	}
	var via []v1alpha1.ObjectReference
	found := false
	for _, kv := range l.vias {
		if kv.Group == tp.Group && kv.Kind == tp.Kind {
			via, found = kv.Via, true
			break
		}
	}
	if !found {
		return nil
	}
	if e := findEntry(tp, l.section, via); e != nil && l.section != "" {
		return e
	}
	return findEntry(tp, "", via)
}

// findEntry returns the entry of section with the given via (any via when
// via is nil).
func findEntry(tp *v1alpha1.TargetPolicy, section string, via []v1alpha1.ObjectReference) *v1alpha1.EffectiveSpec {
	for i := range tp.Effective {
		e := &tp.Effective[i]
		if e.SectionName != section {
			continue
		}
		if via == nil || sameRefs(e.Via, via) {
			return e
		}
	}
	return nil
}

func sameRefs(a, b []v1alpha1.ObjectReference) bool {
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

// pathSet holds the nodes of the context's path and the Namespaces of its
// objects: the attachment points a source on this path can have.
func (l lookup) pathSet() map[string]bool {
	set := make(map[string]bool, 2*len(l.path))
	for _, r := range l.path {
		set[refKey(r)] = true
		if r.Namespace != "" {
			set[refKey(v1alpha1.ObjectReference{Kind: "Namespace", Name: r.Namespace})] = true
		}
	}
	return set
}

func refKey(r v1alpha1.ObjectReference) string {
	return r.Group + "|" + r.Kind + "|" + r.Namespace + "|" + r.Name + "|" + r.SectionName
}

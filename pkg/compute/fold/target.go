package fold

// The policies of one kind at one target: its effective entries per
// context and section (docs/spec.md §5.5, §5.7) and how each source fared
// in them (§5.6); Direct kinds in direct.go.

import (
	"sort"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/attach"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

func (s *Session) targetPolicy(t topology.NodeID, k *attach.KindIndex) (v1alpha1.TargetPolicy, bool) {
	tp := v1alpha1.TargetPolicy{Group: k.Kind.GK.Group, Kind: k.Kind.GK.Kind, Class: k.Kind.Descriptor.Class, Semantics: k.Kind.Semantics}
	a := &s.aggs
	a.reset()
	a.prof = k.Kind.Profile
	// Where the kind cannot take effect there is no effective entry, but a policy listed
	// Invalid here is still shown.
	if a.prof.Reaches(k.Kind.GK.Kind, t) {
		sections := k.Sections(t)
		if k.Kind.Descriptor.Class == v1alpha1.ClassDirect {
			s.direct(t, k, sections, a, &tp)
		} else {
			s.inherited(t, k, sections, a, &tp)
		}
	}
	for _, inv := range k.Invalid(t) {
		es := invalidEntries(inv.Policy)
		for i := range es {
			g := a.get(inv.Policy, &es[i], inv.Node, topology.LevelOf(inv.Node))
			g.invalid = inv.Msg
		}
	}
	if len(a.l) == 0 {
		return tp, false
	}
	tp.Sources = a.sources(s.m)
	sort.Slice(tp.Effective, func(i, j int) bool { return lessEffective(tp.Effective[i], tp.Effective[j]) })
	return tp, true
}

func invalidEntries(p *semantics.Policy) []semantics.Entry {
	if len(p.Entries) > 0 {
		return p.Entries
	}
	if p.Class == v1alpha1.ClassDirect {
		return []semantics.Entry{{Stanza: v1alpha1.StanzaNone, Strategy: v1alpha1.MergeNone}}
	}
	return []semantics.Entry{{Stanza: v1alpha1.StanzaDefaults, Strategy: v1alpha1.MergeNone}}
}

func (s *Session) inherited(t topology.NodeID, k *attach.KindIndex, sections []string, a *aggs, tp *v1alpha1.TargetPolicy) {
	// Size Effective once (contexts are memoised, so counting is cheap):
	// outputs are kept for long, appending would leave up to half unused.
	total := len(s.contexts(t, k))
	for _, sec := range sections {
		n := t
		n.Section = sec
		total += len(s.contexts(n, k))
	}
	tp.Effective = make([]v1alpha1.EffectiveSpec, 0, total)
	var tally sourceTally
	// A profile that folds per route rule only has no whole-route context where every rule
	// has one of its own (semantics.RuleContexts).
	if !semantics.RulesCover(k.Kind.Profile, k.Kind.GK.Kind, s.g.Routes[t], sections) {
		s.emitInherited(t, "", k, a, tp, &tally)
	}
	for _, sec := range sections {
		n := t
		n.Section = sec
		s.emitInherited(n, sec, k, a, tp, &tally)
	}
	if len(tp.Effective) == 0 {
		tp.Effective = nil
	}
}

// emitInherited adds an effective entry for each context of n (section:
// the section it stands for, "" for the whole target) and counts how the
// sources fared in it.
func (s *Session) emitInherited(n topology.NodeID, section string, k *attach.KindIndex, a *aggs, tp *v1alpha1.TargetPolicy, tally *sourceTally) {
	flavor := k.Kind.Profile.Flavor(k.Kind.GK.Kind, n)
	for _, v := range s.contexts(n, k) {
		if len(v.elems) == 0 {
			continue
		}
		r := s.fold(v, k, flavor)
		if r.live == 0 {
			continue
		}
		// Spec bytes, fieldSources and via are shared with every other
		// output of this fold: outputs are read-only.
		es := v1alpha1.EffectiveSpec{SectionName: section, Spec: runtime.RawExtension{Raw: r.spec}, FieldSources: r.fieldSources, Via: v.refs}
		tp.Effective = append(tp.Effective, es)
		tally.add(v, r, a)
	}
}

// sourceTally counts, context by context, how each source (one per policy
// and stanza) fared: its slices are scratch, reused for every context.
type sourceTally struct {
	parts []sourcePart
	idx   []int // the part of each fold entry
}

type sourcePart struct {
	g               *srcAgg
	total, survived int
	conflicted      bool
}

// add counts the context of via v, folded into r. A policy attached at two
// levels of the path takes part once, with the union of what survives of
// its entries.
func (t *sourceTally) add(v via, r *foldResult, a *aggs) {
	t.parts = t.parts[:0]
	t.idx = t.idx[:0]
	for i, fe := range r.entries {
		if r.outcomes[i].apart {
			t.idx = append(t.idx, -1)
			continue
		}
		level := fe.Level
		for _, el := range v.elems {
			if el.node == fe.Node {
				level = el.level
				break
			}
		}
		g := a.get(fe.Policy, fe.Entry, fe.Node, level)
		o := r.outcomes[i]
		pi := -1
		for j := range t.parts {
			if t.parts[j].g == g {
				pi = j
				break
			}
		}
		if pi < 0 {
			pi = len(t.parts)
			t.parts = append(t.parts, sourcePart{g: g})
		}
		t.idx = append(t.idx, pi)
		p := &t.parts[pi]
		if o.total > p.total {
			p.total = o.total
		}
		p.survived += o.survived
		if o.conflictedBy != "" {
			p.conflicted = true
		}
	}
	for j := range t.parts {
		p := &t.parts[j]
		p.g.contexts++
		switch {
		case p.conflicted:
			p.g.conflicted++
			p.g.overridden++
		case p.survived >= p.total:
			p.g.enforced++
		case p.survived == 0:
			p.g.overridden++
		}
	}
	for i, pi := range t.idx {
		if pi < 0 {
			continue
		}
		if p := &t.parts[pi]; p.survived < p.total || p.conflicted {
			for _, b := range r.outcomes[i].beaters {
				p.g.beat(b)
			}
		}
	}
}

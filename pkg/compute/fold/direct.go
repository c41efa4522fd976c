package fold

// Direct kinds (docs/spec.md §5.3): among the policies attached to a target,
// or to one of its sections, which beats the whole object for that section,
// the established one wins whole and the others are Conflicted.

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/attach"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

func (s *Session) direct(t topology.NodeID, k *attach.KindIndex, sections []string, a *aggs, tp *v1alpha1.TargetPolicy) {
	whole := s.attached(t, k)
	if refused := semantics.RefusedListeners(k.Kind.Profile, k.Kind.GK.Kind, s.g.Gateways[t]); refused != nil {
		s.directByListener(t, k, whole, refused, a, tp)
		return
	}
	s.emitDirect(t, t, "", k, whole, nil, a, tp)
	for _, sec := range sections {
		n := t
		n.Section = sec
		s.emitDirect(t, n, sec, k, s.attached(n, k), whole, a, tp)
	}
}

// directByListener is direct for a Gateway t some of whose listeners (refused) the kind does
// not take effect on (semantics.ListenerReach): an entry for each other listener, of the
// policies on that listener (those on t Conflicted there), else of those on t; none for a
// refused listener, nor for the whole Gateway, which the refused listeners are part of.
func (s *Session) directByListener(t topology.NodeID, k *attach.KindIndex, whole []*semantics.Policy, refused map[string]bool, a *aggs, tp *v1alpha1.TargetPolicy) {
	for _, l := range s.g.Gateways[t].Listeners {
		if refused[l.Name] {
			continue
		}
		n := t
		n.Section = l.Name
		if own := s.attached(n, k); len(own) > 0 {
			s.emitDirect(t, n, l.Name, k, own, whole, a, tp)
		} else {
			s.emitDirect(t, t, l.Name, k, whole, nil, a, tp)
		}
	}
}

// emitDirect adds the effective entry of a Direct kind at n (target t, or its section): the
// policies there that the profile lets take effect (docs/spec.md §5.3: the established one), their
// specs merged in order; every other candidate, and every policy on the whole object when n is
// a section (losers), is Conflicted there.
func (s *Session) emitDirect(t, n topology.NodeID, section string, k *attach.KindIndex, cands, losers []*semantics.Policy, a *aggs, tp *v1alpha1.TargetPolicy) {
	if len(cands) == 0 {
		return
	}
	winners := k.Kind.Profile.Direct(cands)
	if len(winners) > 0 {
		s.emitDirectWinners(t, n, section, winners, len(losers) > 0, a, tp)
	}
	for _, l := range append(append([]*semantics.Policy{}, cands...), losers...) {
		if slices.Contains(winners, l) {
			continue
		}
		by := l.RejectedBy
		if by == nil {
			if len(winners) == 0 {
				// Every policy on the section was rejected elsewhere: nothing beat l here.
				continue
			}
			by = winners[0]
		}
		ln := n
		if !slices.Contains(sectionsOf(l, k, t), section) {
			ln = t
		}
		lg := a.get(l, &l.Entries[0], ln, topology.LevelOf(ln))
		lg.contexts++
		lg.beat(by.DisplayName)
	}
}

// emitDirectWinners adds the effective entry of the winners of a Direct kind at n: their specs
// merged in order. objectBears says the object t bears policies of the kind too, when n is
// one of its sections.
func (s *Session) emitDirectWinners(t, n topology.NodeID, section string, winners []*semantics.Policy, objectBears bool, a *aggs, tp *v1alpha1.TargetPolicy) {
	var val *merge.Value
	for i, w := range winners {
		e := &w.Entries[0]
		val = merge.Patch(val, merge.Build(e.Spec, i, e.Schema))
	}
	val = merge.StripNulls(val)
	fs := map[string]string{}
	merge.WalkLeaves(val, "", func(ptr string, src int) { fs[ptr] = winners[src].DisplayName })
	via := []v1alpha1.ObjectReference{n.Ref()}
	if n != t && objectBears {
		// The object bears policies too: it is on the section's path (docs/spec.md §5.5).
		via = []v1alpha1.ObjectReference{t.Ref(), n.Ref()}
	}
	tp.Effective = append(tp.Effective, v1alpha1.EffectiveSpec{
		Via: via, SectionName: section,
		Spec: runtime.RawExtension{Raw: mustJSON(merge.ToJSON(val))}, FieldSources: fs,
	})
	for _, w := range winners {
		g := a.get(w, &w.Entries[0], n, topology.LevelOf(n))
		g.contexts++
		g.wins++
	}
}

// sectionsOf lists the sections of t that p is attached to.
func sectionsOf(p *semantics.Policy, k *attach.KindIndex, t topology.NodeID) []string {
	var out []string
	for _, a := range p.Resolution.Attachments {
		if a.Invalid == "" && a.Node.Object() == t && a.Node.Section != "" {
			out = append(out, a.Node.Section)
		}
	}
	return out
}

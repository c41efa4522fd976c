package compute

// Assembling an output object: per target and policy kind the sources with
// their outcomes and messages (docs/spec.md §5.6) and the effective entries per
// context and section (§5.5, §5.7), sorted as docs/spec.md §2 says.

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/attach"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

type srcAgg struct {
	pol                                  *semantics.Policy
	stanza                               v1alpha1.Stanza
	strategy                             v1alpha1.MergeStrategy
	node                                 topology.NodeID
	level                                int
	contexts, enforced, overridden, wins int
	conflicted                           int      // contexts where a same-target rule beat it whole
	beaters                              []string // distinct, unsorted
	invalid                              string
}

func (g *srcAgg) beat(by string) {
	for _, b := range g.beaters {
		if b == by {
			return
		}
	}
	g.beaters = append(g.beaters, by)
}

// aggs collects the source entries of one target and kind; there are few,
// so a slice searched linearly beats a map. Its entries are reused from
// one target to the next (sources copies what it needs).
type aggs struct {
	prof semantics.Profile // the kind's: it names the strategy each source reports
	l    []*srcAgg
	pool []*srcAgg // entries to reuse
	used int
}

func (a *aggs) reset() {
	a.l = a.l[:0]
	a.used = 0
}

// get returns the source entry of p's stanza; attachedTo is its least
// specific attachment point among those that reach the target.
func (a *aggs) get(p *semantics.Policy, e *semantics.Entry, n topology.NodeID, level int) *srcAgg {
	var g *srcAgg
	for _, x := range a.l {
		if x.pol == p && x.stanza == e.Stanza {
			g = x
			break
		}
	}
	if g == nil {
		if a.used == len(a.pool) {
			a.pool = append(a.pool, &srcAgg{})
		}
		g = a.pool[a.used]
		a.used++
		*g = srcAgg{pol: p, stanza: e.Stanza, strategy: a.prof.ReportedStrategy(e), node: n, level: level, beaters: g.beaters[:0]}
		a.l = append(a.l, g)
	}
	if level < g.level || level == g.level && topology.LessNode(n, g.node) {
		g.level = level
		g.node = n
	}
	return g
}

func (s *session) targetPolicy(t topology.NodeID, k *attach.KindIndex) (v1alpha1.TargetPolicy, bool) {
	tp := v1alpha1.TargetPolicy{Group: k.Kind.GK.Group, Kind: k.Kind.GK.Kind, Class: k.Kind.Descriptor.Class}
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

func (s *session) inherited(t topology.NodeID, k *attach.KindIndex, sections []string, a *aggs, tp *v1alpha1.TargetPolicy) {
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
	s.emitInherited(t, "", k, a, tp, &tally)
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
func (s *session) emitInherited(n topology.NodeID, section string, k *attach.KindIndex, a *aggs, tp *v1alpha1.TargetPolicy, tally *sourceTally) {
	flavor := k.Kind.Profile.Flavor(k.Kind.GK.Kind, n)
	for _, v := range s.contexts(n, k) {
		if len(v.elems) == 0 {
			continue
		}
		r := s.fold(v, k, flavor)
		if len(r.entries) == 0 {
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
		if p := &t.parts[pi]; p.survived < p.total || p.conflicted {
			for _, b := range r.outcomes[i].beaters {
				p.g.beat(b)
			}
		}
	}
}

func (s *session) direct(t topology.NodeID, k *attach.KindIndex, sections []string, a *aggs, tp *v1alpha1.TargetPolicy) {
	whole := s.attached(t, k)
	s.emitDirect(t, t, "", k, whole, nil, a, tp)
	for _, sec := range sections {
		n := t
		n.Section = sec
		s.emitDirect(t, n, sec, k, s.attached(n, k), whole, a, tp)
	}
}

// emitDirect adds the effective entry of a Direct kind at n (target t, or its section): the
// policies there that the profile lets take effect (docs/spec.md §5.3: the established one), their
// specs merged in order; every other candidate, and every policy on the whole object when n is
// a section (losers), is Conflicted there.
func (s *session) emitDirect(t, n topology.NodeID, section string, k *attach.KindIndex, cands, losers []*semantics.Policy, a *aggs, tp *v1alpha1.TargetPolicy) {
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
		if !contains(sectionsOf(l, k, t), section) {
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
func (s *session) emitDirectWinners(t, n topology.NodeID, section string, winners []*semantics.Policy, objectBears bool, a *aggs, tp *v1alpha1.TargetPolicy) {
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

func (a *aggs) sources(m *memo) []v1alpha1.PolicySource {
	l := a.l
	sort.Slice(l, func(i, j int) bool {
		x, y := l[i], l[j]
		if x.level != y.level {
			return x.level < y.level
		}
		if !x.pol.Created.Equal(y.pol.Created) {
			return x.pol.Created.Before(y.pol.Created)
		}
		if x.pol.DisplayName != y.pol.DisplayName {
			return x.pol.DisplayName < y.pol.DisplayName
		}
		if x.stanza != y.stanza {
			return x.stanza == v1alpha1.StanzaOverrides
		}
		return topology.LessNode(x.node, y.node)
	})
	out := make([]v1alpha1.PolicySource, 0, len(l))
	for _, g := range l {
		ps := v1alpha1.PolicySource{
			Namespace: g.pol.ID.Namespace, Name: g.pol.ID.Name, AttachedTo: g.node.Ref(),
			Stanza: g.stanza, MergeStrategy: g.strategy,
		}
		ps.Outcome, ps.Message = g.outcome()
		if r := a.prof.Rule(g.pol.ID.GK.Kind); r != "" && g.invalid == "" {
			ps.Message += "; " + r
		}
		ps.Message = m.intern(ps.Message) // outputs repeat the same few messages
		out = append(out, ps)
	}
	return out
}

// outcome is docs/spec.md §5.6 over what the source went through in every context.
func (g *srcAgg) outcome() (v1alpha1.Outcome, string) {
	beaters := g.beaters
	sort.Strings(beaters)
	by := strings.Join(beaters, ", ")
	switch {
	case g.invalid != "":
		return v1alpha1.OutcomeInvalid, g.invalid
	case g.strategy == v1alpha1.MergeNone:
		switch g.wins {
		case g.contexts:
			return v1alpha1.OutcomeEnforced, "established policy; in effect"
		case 0:
			return v1alpha1.OutcomeConflicted, conflictMessage(beaters, by)
		}
		return v1alpha1.OutcomePartiallyEnforced, "in effect on the object, but " + by + " takes effect on the section(s) it targets"
	case g.conflicted > 0 && g.conflicted == g.contexts:
		return v1alpha1.OutcomeConflicted, conflictMessage(beaters, by)
	case g.enforced == g.contexts:
		return v1alpha1.OutcomeEnforced, "all fields in effect in " + plural(g.contexts, "context")
	case g.overridden == g.contexts:
		return v1alpha1.OutcomeOverridden, "no field in effect in " + plural(g.contexts, "context") + "; superseded by " + orNone(by)
	}
	return v1alpha1.OutcomePartiallyEnforced, "fully in effect in " + strconv.Itoa(g.enforced) + " of " + plural(g.contexts, "context") + "; partly superseded by " + orNone(by)
}

func conflictMessage(beaters []string, by string) string {
	if len(beaters) == 1 {
		return "conflicts with the established policy " + by + ", which takes effect"
	}
	return "conflicts with the established policies " + by + ", which take effect"
}

func orNone(s string) string {
	if s == "" {
		return "its own overrides or a null that removes fields"
	}
	return s
}

func plural(n int, w string) string {
	if n == 1 {
		return "1 " + w
	}
	return strconv.Itoa(n) + " " + w + "s"
}

func lessRef(a, b v1alpha1.ObjectReference) int {
	for _, p := range [][2]string{{a.Group, b.Group}, {a.Kind, b.Kind}, {a.Namespace, b.Namespace}, {a.Name, b.Name}, {a.SectionName, b.SectionName}} {
		if p[0] != p[1] {
			if p[0] < p[1] {
				return -1
			}
			return 1
		}
	}
	return 0
}

func lessEffective(a, b v1alpha1.EffectiveSpec) bool {
	for i := 0; i < len(a.Via) && i < len(b.Via); i++ {
		if c := lessRef(a.Via[i], b.Via[i]); c != 0 {
			return c < 0
		}
	}
	if len(a.Via) != len(b.Via) {
		return len(a.Via) < len(b.Via)
	}
	return a.SectionName < b.SectionName
}

// targetNodes lists the objects that key names.
func (st *state) targetNodes(key Key) []topology.NodeID {
	out := append(make([]topology.NodeID, 0, len(st.byKey[key])+len(st.invalidKeys[key])), st.byKey[key]...)
	for n := range st.invalidKeys[key] {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if len(out) > 1 {
		sort.Slice(out, func(i, j int) bool { return topology.LessNode(out[i], out[j]) })
	}
	return out
}

func (st *state) compute(key Key, s *session) (runtime.Object, bool) {
	var targets []v1alpha1.Target
	kinds := st.att.SortedKinds()
	for _, n := range st.targetNodes(key) {
		t := v1alpha1.Target{Group: n.Group, Kind: n.Kind, Name: n.Name}
		for _, k := range kinds {
			if tp, ok := s.targetPolicy(n, k); ok {
				t.Policies = append(t.Policies, tp)
			}
		}
		if len(t.Policies) > 0 {
			targets = append(targets, t)
		}
	}
	if len(targets) == 0 {
		return nil, false
	}
	sort.SliceStable(targets, func(i, j int) bool {
		if targets[i].Group != targets[j].Group {
			return targets[i].Group < targets[j].Group
		}
		return targets[i].Kind < targets[j].Kind
	})
	if key.Namespace == "" {
		return &v1alpha1.ClusterEffectivePolicy{
			TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "ClusterEffectivePolicy"},
			ObjectMeta: metav1.ObjectMeta{Name: key.Name},
			Targets:    targets,
		}, true
	}
	return &v1alpha1.EffectivePolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "EffectivePolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace},
		Targets:    targets,
	}, true
}

package fold

// The sources of a target's policies of one kind, one per policy and
// stanza, with their outcomes and messages (docs/spec.md §5.6), sorted as
// docs/spec.md §2 says.

import (
	"sort"
	"strconv"
	"strings"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"

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
		*g = srcAgg{pol: p, stanza: e.Stanza, strategy: a.prof.ReportedStrategy(p.ID.GK.Kind, e), node: n, level: level, beaters: g.beaters[:0]}
		a.l = append(a.l, g)
	}
	if level < g.level || level == g.level && topology.LessNode(n, g.node) {
		g.level = level
		g.node = n
	}
	return g
}

func (a *aggs) sources(m *Memo) []v1alpha1.PolicySource {
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

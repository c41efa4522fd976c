package fold

// The fold of one context (docs/spec.md §5.4): the context's entries, merged by the
// kind's profile (pkg/compute/semantics), memoised per via and flavor; then which leaf
// each entry set and how each entry fared.

import (
	"encoding/json"
	"sync/atomic"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/attach"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
)

type entryOutcome struct {
	total, survived int
	beaters         []string
	conflictedBy    string // the policy that beat this entry whole on its target, if any
	apart           bool   // the profile does not apply the entry here (semantics.FoldValue.Apart)
}

type foldResult struct {
	stamp        uint64        // viaStamp when folded
	checked      atomic.Uint64 // attach.KindIndex.Changed when last found valid
	spec         []byte
	fieldSources map[string]string
	entries      []semantics.FoldEntry
	outcomes     []entryOutcome
	live         int // entries not apart
}

// viaStamp is the newest attachment generation of the nodes of v: a fold
// stays valid while it is unchanged (generations only grow, and every node
// of a via bears a policy, so it has one).
func viaStamp(v via, k *attach.KindIndex) uint64 {
	var m uint64
	for _, el := range v.elems {
		if g := k.Gen(el.node); g > m {
			m = g
		}
	}
	return m
}

func (s *Session) fold(v via, k *attach.KindIndex, flavor string) *foldResult {
	fk := foldKey{k, v.key, flavor}
	old, ok := s.m.folds.get(fk)
	if ok && old.checked.Load() == k.Changed() {
		return old // no attachment of kind k changed since last checked
	}
	stamp := viaStamp(v, k)
	if ok && old.stamp == stamp {
		old.checked.Store(k.Changed())
		return old
	}
	r := s.doFold(v, k, flavor)
	r.stamp = stamp
	r.checked.Store(k.Changed())
	r, added := s.m.folds.put(fk, r, func(old *foldResult) bool { return old.stamp == stamp })
	if added {
		s.m.nfolds.Add(1)
	}
	return r
}

func (s *Session) doFold(v via, k *attach.KindIndex, flavor string) *foldResult {
	var es []semantics.FoldEntry
	for _, el := range v.elems {
		for _, p := range s.attached(el.node, k) {
			for i := range p.Entries {
				es = append(es, semantics.FoldEntry{Policy: p, Entry: &p.Entries[i], Node: el.node, Level: el.level, NodeAnnotations: el.ann})
			}
		}
	}
	r := &foldResult{entries: es}
	if len(es) == 0 {
		return r
	}
	fv := k.Kind.Profile.Fold(es, flavor)
	acc := merge.StripNulls(fv.Acc)
	r.spec = mustJSON(merge.ToJSON(acc))
	r.fieldSources = map[string]string{}
	survived := make([]int, len(es))
	merge.WalkLeaves(acc, "", func(ptr string, src int) {
		r.fieldSources[ptr] = es[src].Policy.DisplayName
		survived[src]++
	})
	if len(r.fieldSources) == 0 {
		r.fieldSources = nil
	}
	r.outcomes = outcomesOf(es, fv, survived)
	r.live = len(es)
	for i := range fv.Apart {
		if fv.Apart[i] {
			r.outcomes[i].apart = true
			r.live--
		}
	}
	return r
}

// outcomesOf says how each entry of a fold fared: how many of its leaves survived, and who beat
// it (the policies holding a leaf of the result, or the one that beat it on its target).
func outcomesOf(es []semantics.FoldEntry, fv semantics.FoldValue, survived []int) []entryOutcome {
	holders := map[string]bool{}
	for i, n := range survived {
		if n > 0 {
			holders[es[i].Policy.DisplayName] = true
		}
	}
	out := make([]entryOutcome, len(es))
	for i := range es {
		o := entryOutcome{total: es[i].Entry.Leaves, survived: survived[i]}
		if fv.Totals != nil {
			o.total = fv.Totals[i]
		}
		self := es[i].Policy.DisplayName
		switch {
		case fv.ConflictedBy != nil && fv.ConflictedBy[i] != nil:
			o.conflictedBy = fv.ConflictedBy[i].DisplayName
			o.beaters = []string{o.conflictedBy}
		case o.survived < o.total || o.total == 0 && o.survived == 0 && len(es) > 1:
			for h := range holders {
				if h != self {
					o.beaters = append(o.beaters, h)
				}
			}
		}
		out[i] = o
	}
	return out
}

func mustJSON(v interface{}) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte("{}")
	}
	return b
}

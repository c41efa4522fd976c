package compute

// The fold of one context (SPEC §5.4): entries folded from the most specific
// upwards, each established entry applying its own strategy, memoised per
// via.

import (
	"encoding/json"
	"sync/atomic"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

type foldEntry struct {
	pol   *policy
	e     *entry
	node  nodeID
	level int
}

type entryOutcome struct {
	total, survived int
	beaters         []string
}

type foldResult struct {
	stamp        uint64        // viaStamp when folded
	checked      atomic.Uint64 // kindIndex.changed when last found valid
	spec         []byte
	fieldSources map[string]string
	entries      []foldEntry
	outcomes     []entryOutcome
}

// viaStamp is the newest attachment generation of the nodes of v: a fold
// stays valid while it is unchanged (generations only grow, and every node
// of a via bears a policy, so it has one).
func viaStamp(v via, k *kindIndex) uint64 {
	var m uint64
	for _, el := range v.elems {
		if g := k.gen[el.node]; g > m {
			m = g
		}
	}
	return m
}

func (s *session) fold(v via, k *kindIndex) *foldResult {
	fk := foldKey{k, v.key}
	old, ok := s.m.folds.get(fk)
	if ok && old.checked.Load() == k.changed {
		return old // no attachment of kind k changed since last checked
	}
	stamp := viaStamp(v, k)
	if ok && old.stamp == stamp {
		old.checked.Store(k.changed)
		return old
	}
	r := s.doFold(v, k)
	r.stamp = stamp
	r.checked.Store(k.changed)
	r, added := s.m.folds.put(fk, r, func(old *foldResult) bool { return old.stamp == stamp })
	if added {
		s.m.nfolds.Add(1)
	}
	return r
}

func (s *session) doFold(v via, k *kindIndex) *foldResult {
	var es []foldEntry
	for _, el := range v.elems {
		for _, p := range s.attached(el.node, k) {
			for i := range p.entries {
				es = append(es, foldEntry{pol: p, e: &p.entries[i], node: el.node, level: el.level})
			}
		}
	}
	r := &foldResult{entries: es}
	if len(es) == 0 {
		return r
	}
	last := len(es) - 1
	acc := build(es[last].e.spec, last, es[last].e.schema)
	for i := last - 1; i >= 0; i-- {
		e := es[i].e
		switch e.strategy {
		case v1alpha1.MergeAtomicOverrides:
			acc = build(e.spec, i, e.schema)
		case v1alpha1.MergePatchDefaults:
			acc = mergePatch(build(e.spec, i, e.schema), acc)
		case v1alpha1.MergePatchOverrides:
			acc = mergePatch(acc, build(e.spec, i, e.schema))
		default: // AtomicDefaults
			if isEmptyValue(acc) {
				acc = build(e.spec, i, e.schema)
			}
		}
	}
	acc = stripNulls(acc)
	r.spec = mustJSON(toJSON(acc))
	r.fieldSources = map[string]string{}
	survived := make([]int, len(es))
	walkLeaves(acc, "", func(ptr string, src int) {
		r.fieldSources[ptr] = es[src].pol.disp
		survived[src]++
	})
	holders := map[string]bool{}
	for i, n := range survived {
		if n > 0 {
			holders[es[i].pol.disp] = true
		}
	}
	r.outcomes = make([]entryOutcome, len(es))
	for i := range es {
		o := entryOutcome{total: es[i].e.leaves, survived: survived[i]}
		if o.survived < o.total || o.total == 0 && o.survived == 0 && len(es) > 1 {
			self := es[i].pol.disp
			for h := range holders {
				if h != self {
					o.beaters = append(o.beaters, h)
				}
			}
		}
		r.outcomes[i] = o
	}
	if len(r.fieldSources) == 0 {
		r.fieldSources = nil
	}
	return r
}

func mustJSON(v interface{}) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte("{}")
	}
	return b
}

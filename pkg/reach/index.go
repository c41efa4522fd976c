package reach

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// Entry is one source entry of an output: a policy (of one kind) reaching
// one target, with its verdict there.
type Entry struct {
	// Policy names the policy (Namespace "" when cluster-scoped).
	Policy compute.Key
	// Group and Kind of the policy.
	Group, Kind string
	// Class of the policy kind.
	Class v1alpha1.PolicyClass
	// Reach is the target, attachment, stanza and verdict.
	Reach v1alpha1.Reach
}

// FromOutput lists the source entries of an EffectivePolicy or
// ClusterEffectivePolicy, in the output's order; nil for anything else.
func FromOutput(obj runtime.Object) []Entry {
	var (
		ns      string
		targets []v1alpha1.Target
	)
	switch o := obj.(type) {
	case *v1alpha1.EffectivePolicy:
		ns, targets = o.Namespace, o.Targets
	case *v1alpha1.ClusterEffectivePolicy:
		targets = o.Targets
	default:
		return nil
	}
	n := 0
	for i := range targets {
		for j := range targets[i].Policies {
			n += len(targets[i].Policies[j].Sources)
		}
	}
	out := make([]Entry, 0, n)
	for i := range targets {
		t := &targets[i]
		for j := range t.Policies {
			tp := &t.Policies[j]
			for _, s := range tp.Sources {
				out = append(out, Entry{
					Policy: compute.Key{Namespace: s.Namespace, Name: s.Name},
					Group:  tp.Group, Kind: tp.Kind, Class: tp.Class,
					Reach: v1alpha1.Reach{
						Target:     targetRef(ns, t.Group, t.Kind, t.Name, s.AttachedTo),
						AttachedTo: s.AttachedTo, Stanza: s.Stanza, Outcome: s.Outcome, Message: s.Message,
					},
				})
			}
		}
	}
	return out
}

// targetRef is the reached target: an output's target, with the section
// of the attachment when the policy is attached to a section of this very
// target (the reach is that section's).
func targetRef(ns, group, kind, name string, a v1alpha1.ObjectReference) v1alpha1.ObjectReference {
	t := v1alpha1.ObjectReference{Group: group, Kind: kind, Name: name, Namespace: ns}
	if a.SectionName != "" && a.Group == group && a.Kind == kind && a.Name == name && a.Namespace == ns {
		t.SectionName = a.SectionName
	}
	return t
}

// Index holds the entries of every output, and for each policy the outputs
// that have entries of it. It is not safe for concurrent use: the live
// layer's worker, the only writer of the outputs, owns it.
//
// Entries are held compact (20 bytes each): a policy, its key, an attachment point
// and a verdict are interned (see interner), a target is an index into its
// output's few targets, and a target's namespace and section are derived
// when an entry is read back (Of).
type Index struct {
	byOutput map[compute.Key]*outputEntries
	byID     []*outputEntries                    // byOutput by output id: reads hash no strings
	byPolicy map[compute.Key]map[uint32]struct{} // policy -> ids of outputs with entries of it

	outputs     *interner[compute.Key]
	keys        *interner[compute.Key] // policies' keys (kinds sharing a name share one)
	policies    *interner[policyRef]
	attachments *interner[v1alpha1.ObjectReference]
	verdicts    *interner[verdict]
}

type policyRef struct {
	key         compute.Key
	group, kind string
	class       v1alpha1.PolicyClass
}

type verdict struct {
	stanza  v1alpha1.Stanza
	outcome v1alpha1.Outcome
	message string
}

type target struct{ group, kind, name string }

type compactEntry struct {
	policy, key, attachedTo, verdict uint32
	target                           uint16
}

// outputEntries are one output's entries: its id, its targets, and the
// entries pointing into them.
type outputEntries struct {
	id      uint32
	targets []target
	entries []compactEntry
}

// NewIndex returns an empty Index.
func NewIndex() *Index {
	return &Index{
		byOutput: map[compute.Key]*outputEntries{}, byPolicy: map[compute.Key]map[uint32]struct{}{},
		outputs: newInterner[compute.Key](), keys: newInterner[compute.Key](), policies: newInterner[policyRef](),
		attachments: newInterner[v1alpha1.ObjectReference](), verdicts: newInterner[verdict](),
	}
}

// comparableEntry is what an entry is compared by between an output's old and
// new entries (interned ids are stable while either holds them).
type comparableEntry struct {
	attachedTo, verdict uint32
	target              target
}

// Set replaces the entries of output out (none: the output is gone) and
// returns the policies whose entries in it changed, sorted.
func (ix *Index) Set(out compute.Key, entries []Entry) []compute.Key {
	old := ix.byOutput[out]
	var next *outputEntries
	if len(entries) > 0 {
		next = ix.compact(out, old, entries)
	}
	switch {
	case old == nil && next == nil:
		return nil
	case old == nil:
		return ix.add(out, next)
	}
	before, after := ix.byPolicyOf(old), ix.byPolicyOf(next)
	changed := make(map[compute.Key]bool, len(after))
	for p, es := range before {
		if !slices.Equal(es, after[p]) {
			changed[ix.policies.value(p).key] = true
		}
	}
	for p := range after {
		if _, was := before[p]; !was {
			changed[ix.policies.value(p).key] = true
		}
	}
	// Which outputs a policy key has entries in, by key (kinds sharing a
	// name share it).
	keysBefore, keysAfter := ix.keysOf(before), ix.keysOf(after)
	var id uint32
	switch {
	case old != nil:
		id = old.id
	case next != nil:
		id = next.id
	}
	for k := range keysBefore {
		if !keysAfter[k] {
			if outs := ix.byPolicy[k]; outs != nil {
				delete(outs, id)
				if len(outs) == 0 {
					delete(ix.byPolicy, k)
				}
			}
		}
	}
	for k := range keysAfter {
		if !keysBefore[k] {
			outs := ix.byPolicy[k]
			if outs == nil {
				outs = map[uint32]struct{}{}
				ix.byPolicy[k] = outs
			}
			outs[id] = struct{}{}
		}
	}
	if old != nil {
		ix.releaseEntries(old)
	}
	if next == nil {
		if old != nil {
			ix.outputs.release(old.id)
			ix.byID[old.id] = nil
		}
		delete(ix.byOutput, out)
	} else {
		ix.store(out, next)
	}
	keys := make([]compute.Key, 0, len(changed))
	for p := range changed {
		keys = append(keys, p)
	}
	compute.SortKeys(keys)
	return keys
}

// add records the first entries of output out (every output, at
// start-up): each policy in them changed, and nothing is compared.
func (ix *Index) add(out compute.Key, next *outputEntries) []compute.Key {
	kids := make([]uint32, 0, 8)
	for _, e := range next.entries {
		if !slices.Contains(kids, e.key) { // few policies per output
			kids = append(kids, e.key)
		}
	}
	keys := make([]compute.Key, len(kids))
	for i, kid := range kids {
		p := ix.keys.value(kid)
		keys[i] = p
		outs := ix.byPolicy[p]
		if outs == nil {
			outs = map[uint32]struct{}{}
			ix.byPolicy[p] = outs
		}
		outs[next.id] = struct{}{}
	}
	ix.store(out, next)
	compute.SortKeys(keys)
	return keys
}

// store makes next the entries of output out.
func (ix *Index) store(out compute.Key, next *outputEntries) {
	ix.byOutput[out] = next
	for int(next.id) >= len(ix.byID) {
		ix.byID = append(ix.byID, nil)
	}
	ix.byID[next.id] = next
}

// compact interns entries of output out (taking old's output id, if any).
func (ix *Index) compact(out compute.Key, old *outputEntries, entries []Entry) *outputEntries {
	next := &outputEntries{entries: make([]compactEntry, len(entries))}
	if old != nil {
		next.id = old.id
	} else {
		next.id = ix.outputs.get(out)
	}
	for i, e := range entries {
		t := target{e.Reach.Target.Group, e.Reach.Target.Kind, e.Reach.Target.Name}
		ti := slices.Index(next.targets, t)
		if ti < 0 {
			ti = len(next.targets)
			next.targets = append(next.targets, t)
		}
		next.entries[i] = compactEntry{
			policy:     ix.policies.get(policyRef{key: e.Policy, group: e.Group, kind: e.Kind, class: e.Class}),
			key:        ix.keys.get(e.Policy),
			attachedTo: ix.attachments.get(e.Reach.AttachedTo),
			verdict:    ix.verdicts.get(verdict{e.Reach.Stanza, e.Reach.Outcome, e.Reach.Message}),
			target:     uint16(ti),
		}
	}
	return next
}

func (ix *Index) releaseEntries(o *outputEntries) {
	for _, e := range o.entries {
		ix.policies.release(e.policy)
		ix.keys.release(e.key)
		ix.attachments.release(e.attachedTo)
		ix.verdicts.release(e.verdict)
	}
}

// byPolicyOf groups an output's entries by policy id, in order.
func (ix *Index) byPolicyOf(o *outputEntries) map[uint32][]comparableEntry {
	m := map[uint32][]comparableEntry{}
	if o == nil {
		return m
	}
	for _, e := range o.entries {
		m[e.policy] = append(m[e.policy], comparableEntry{e.attachedTo, e.verdict, o.targets[e.target]})
	}
	return m
}

func (ix *Index) keysOf(m map[uint32][]comparableEntry) map[compute.Key]bool {
	keys := make(map[compute.Key]bool, len(m))
	for p := range m {
		keys[ix.policies.value(p).key] = true
	}
	return keys
}

// Kind is a policy kind.
type Kind struct{ Group, Kind string }

// Of returns what policy p (of every kind) reaches in every output, by
// kind, unsorted. The slices are built to size: a GatewayClass policy
// reaches tens of thousands of targets.
func (ix *Index) Of(p compute.Key) map[Kind][]v1alpha1.Reach {
	counts := map[uint32]int{}
	ix.eachOf(p, func(_ compute.Key, _ *outputEntries, e compactEntry) { counts[e.policy]++ })
	out := make(map[Kind][]v1alpha1.Reach, len(counts))
	for id, n := range counts {
		pr := ix.policies.value(id)
		k := Kind{pr.group, pr.kind}
		out[k] = slices.Grow(out[k], n)
	}
	ix.eachOf(p, func(key compute.Key, o *outputEntries, e compactEntry) {
		pr := ix.policies.value(e.policy)
		t := o.targets[e.target]
		a := ix.attachments.value(e.attachedTo)
		v := ix.verdicts.value(e.verdict)
		k := Kind{pr.group, pr.kind}
		out[k] = append(out[k], v1alpha1.Reach{
			Target: targetRef(key.Namespace, t.group, t.kind, t.name, a), AttachedTo: a,
			Stanza: v.stanza, Outcome: v.outcome, Message: v.message,
		})
	})
	return out
}

// eachOf calls f with every entry of policy p and its output.
func (ix *Index) eachOf(p compute.Key, f func(compute.Key, *outputEntries, compactEntry)) {
	kid, ok := ix.keys.ids[p]
	if !ok {
		return
	}
	for id := range ix.byPolicy[p] {
		o := ix.byID[id]
		key := ix.outputs.value(id)
		for _, e := range o.entries {
			if e.key == kid {
				f(key, o, e)
			}
		}
	}
}

// Policies lists every policy with entries, sorted.
func (ix *Index) Policies() []compute.Key {
	keys := make([]compute.Key, 0, len(ix.byPolicy))
	for p := range ix.byPolicy {
		keys = append(keys, p)
	}
	compute.SortKeys(keys)
	return keys
}

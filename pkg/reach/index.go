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
				target := v1alpha1.ObjectReference{Group: t.Group, Kind: t.Kind, Name: t.Name, Namespace: ns}
				if a := s.AttachedTo; a.SectionName != "" && a.Group == t.Group && a.Kind == t.Kind && a.Name == t.Name && a.Namespace == ns {
					// Attached to a section of this very target: the reach
					// is that section's.
					target.SectionName = a.SectionName
				}
				out = append(out, Entry{
					Policy: compute.Key{Namespace: s.Namespace, Name: s.Name},
					Group:  tp.Group, Kind: tp.Kind, Class: tp.Class,
					Reach: v1alpha1.Reach{Target: target, AttachedTo: s.AttachedTo, Stanza: s.Stanza, Outcome: s.Outcome, Message: s.Message},
				})
			}
		}
	}
	return out
}

// Index holds the entries of every output, and for each policy the outputs
// that have entries of it. It is not safe for concurrent use: the live
// layer's worker, the only writer of the outputs, owns it.
type Index struct {
	byOutput map[compute.Key][]Entry
	byPolicy map[compute.Key]map[compute.Key]struct{}
}

// NewIndex returns an empty Index.
func NewIndex() *Index {
	return &Index{byOutput: map[compute.Key][]Entry{}, byPolicy: map[compute.Key]map[compute.Key]struct{}{}}
}

// Set replaces the entries of output out (none: the output is gone) and
// returns the policies whose entries in it changed, sorted.
func (ix *Index) Set(out compute.Key, entries []Entry) []compute.Key {
	old := ix.byOutput[out]
	changed := map[compute.Key]bool{}
	before := groupByPolicy(old)
	after := groupByPolicy(entries)
	for p, es := range before {
		if !slices.Equal(es, after[p]) {
			changed[p] = true
		}
		if _, still := after[p]; !still {
			if outs := ix.byPolicy[p]; outs != nil {
				delete(outs, out)
				if len(outs) == 0 {
					delete(ix.byPolicy, p)
				}
			}
		}
	}
	for p := range after {
		if _, was := before[p]; !was {
			changed[p] = true
			outs := ix.byPolicy[p]
			if outs == nil {
				outs = map[compute.Key]struct{}{}
				ix.byPolicy[p] = outs
			}
			outs[out] = struct{}{}
		}
	}
	if len(entries) == 0 {
		delete(ix.byOutput, out)
	} else {
		ix.byOutput[out] = entries
	}
	keys := make([]compute.Key, 0, len(changed))
	for p := range changed {
		keys = append(keys, p)
	}
	compute.SortKeys(keys)
	return keys
}

// Of returns the entries of policy p (of every kind) in every output.
func (ix *Index) Of(p compute.Key) []Entry {
	var out []Entry
	for o := range ix.byPolicy[p] {
		for _, e := range ix.byOutput[o] {
			if e.Policy == p {
				out = append(out, e)
			}
		}
	}
	return out
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

func groupByPolicy(entries []Entry) map[compute.Key][]Entry {
	m := map[compute.Key][]Entry{}
	for _, e := range entries {
		m[e.Policy] = append(m[e.Policy], e)
	}
	return m
}

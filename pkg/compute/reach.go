package compute

// What the engine knows of each policy for its PolicyReach (docs/spec.md §8): its
// kinds, labels and the targets it names with whether they resolved. What a
// policy reaches, and with which verdict, is not here: it is read off the
// outputs (pkg/reach), so that a PolicyReach and the EffectivePolicies it
// points to never disagree.

import (
	"sort"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
)

// PolicyInfo is one policy (of one kind) as its PolicyReach shows it.
type PolicyInfo struct {
	Group, Kind string
	Class       v1alpha1.PolicyClass
	// Semantics of the kind, as its outputs' entries say (v1alpha1.TargetPolicy).
	Semantics string
	// AttachedTo lists the targets the policy names (targetRefs in order,
	// then the objects its selectors pick).
	AttachedTo []v1alpha1.AttachedTarget
	// Labels of the policy object; read-only.
	Labels map[string]string
}

// Policies returns the policies named key.Name in key.Namespace (cluster-
// scoped ones for namespace ""), one per kind, sorted by group and kind;
// none when there is no such policy.
func (e *Engine) Policies(key Key) []PolicyInfo {
	e.mu.RLock()
	defer e.mu.RUnlock()
	st := e.st
	var out []PolicyInfo
	for gk, ki := range st.att.Kinds() {
		if ki.Kind.Namespaced == (key.Namespace == "") {
			continue
		}
		p := st.att.Policy(semantics.PolicyID{GK: gk, Namespace: key.Namespace, Name: key.Name})
		if p == nil {
			continue
		}
		out = append(out, PolicyInfo{Group: gk.Group, Kind: gk.Kind, Class: p.Class, Semantics: ki.Kind.Semantics,
			AttachedTo: st.att.AttachedTo(p), Labels: p.Labels})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}

// PolicyKeys lists the key of every policy, sorted.
func (e *Engine) PolicyKeys() []Key {
	e.mu.RLock()
	defer e.mu.RUnlock()
	ks := make(keySet, len(e.st.att.Policies()))
	for id := range e.st.att.Policies() {
		ks[Key{Namespace: id.Namespace, Name: id.Name}] = true
	}
	return ks.sorted()
}

// TakeChangedPolicies returns, and forgets, the keys of the policies whose
// kind, labels or named targets' resolution changed since the last call
// (sorted). What they reach changes with the outputs Upsert and Delete
// return; this is the rest of what a PolicyReach shows. In bulk mode none
// are recorded: the caller then reads every policy (PolicyKeys).
func (e *Engine) TakeChangedPolicies() []Key {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.st.changedPolicies) == 0 {
		return nil
	}
	ks := make(keySet, len(e.st.changedPolicies))
	for k := range e.st.changedPolicies {
		ks[k] = true
	}
	clear(e.st.changedPolicies)
	return ks.sorted()
}

func (st *state) policyChanged(id semantics.PolicyID) {
	if !st.bulk {
		st.changedPolicies[Key{Namespace: id.Namespace, Name: id.Name}] = struct{}{}
	}
}

package anchors

import (
	"github.com/kuadrant/policy-machinery/machinery"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Rule is one mergeable unit of a policy's spec, as kuadrant-operator's
// MergeableRule (api/v1/merge_strategies.go) is: a top-level field of the
// stanza, or one item of the kind's list-map (its "name" is the rule ID, as
// a RateLimitPolicy's limits are keyed by name). Values are never modified
// after parsing, so merged policies share them.
type Rule struct {
	Value  interface{}
	Source string // locator of the policy the value comes from
}

// Rules are a policy's rules by ID: the field name, or
// "<list-map field>/<item name>".
type Rules map[string]Rule

// stanza is a defaults or overrides stanza (implicit defaults are a
// defaults stanza) with the merge strategy it dictates.
type stanza struct {
	rules  Rules
	atomic bool // Atomic*, else PolicyRule* (kuadrant's "merge", our "patch")
}

// Policy is a generated policy as policy-machinery holds it: a
// machinery.Policy whose Merge folds rules the way kuadrant-operator's
// RateLimitPolicy and AuthPolicy do (api/v1/ratelimitpolicy_types.go:
// Merge calls the source's GetMergeStrategy with (source, target)).
//
// A generated policy may carry both stanzas, which kuadrant's CRDs forbid;
// this project's engine then folds the defaults entry before the overrides
// entry (overrides are established first within a policy, and the fold
// runs from the most specific entry upwards), and so does GetMergeStrategy.
type Policy struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	targetRefs []machinery.PolicyTargetReference
	defaults   *stanza
	overrides  *stanza
	// rules is what the policy yields: for a generated policy, its defaults
	// overlaid by its overrides; for a merge result, the merged rules.
	rules Rules
}

var _ machinery.Policy = &Policy{}

// GetLocator is the policy's node ID in the topology ("kind.group:ns/name").
func (p *Policy) GetLocator() string { return machinery.LocatorFromObject(p) }

// GetTargetRefs returns the target references built once at conversion.
func (p *Policy) GetTargetRefs() []machinery.PolicyTargetReference { return p.targetRefs }

// Rules returns the policy's rules; callers must not modify them.
func (p *Policy) Rules() Rules { return p.rules }

// Empty reports whether the policy yields no rule (kuadrant's
// MergeablePolicy.Empty, which AtomicDefaults consults).
func (p *Policy) Empty() bool { return len(p.rules) == 0 }

// Merge merges other, a less specific policy of the same kind, into p, the
// accumulated more specific result, with other's strategy.
func (p *Policy) Merge(other machinery.Policy) machinery.Policy {
	source, ok := other.(*Policy)
	if !ok {
		return p
	}
	return source.GetMergeStrategy()(source, p)
}

// GetMergeStrategy returns the strategy p dictates as the source of a
// merge: its defaults stanza's, then its overrides stanza's.
func (p *Policy) GetMergeStrategy() machinery.MergeStrategy {
	return func(source, target machinery.Policy) machinery.Policy {
		src, tgt := source.(*Policy), target.(*Policy)
		acc := tgt.rules
		if src.defaults != nil {
			acc = mergeDefaults(*src.defaults, acc)
		}
		if src.overrides != nil {
			acc = mergeOverrides(*src.overrides, acc)
		}
		return tgt.withRules(acc)
	}
}

// withRules is kuadrant's "target.DeepCopyObject() then SetRules": a new
// policy with target's identity and the merged rules (the rule values are
// immutable, so they are shared, not copied).
func (p *Policy) withRules(rules Rules) *Policy {
	c := *p
	c.rules = rules
	return &c
}

// mergeDefaults: AtomicDefaults keeps the target unless it is empty;
// PolicyRuleDefaults keeps the target's rules and adds the source's others.
func mergeDefaults(src stanza, target Rules) Rules {
	if src.atomic {
		if len(target) > 0 {
			return target
		}
		return src.rules
	}
	out := make(Rules, len(target)+len(src.rules))
	for id, r := range src.rules {
		out[id] = r
	}
	for id, r := range target {
		out[id] = r
	}
	return out
}

// mergeOverrides: AtomicOverrides replaces the target with the source;
// PolicyRuleOverrides takes the source's rules and keeps the target's others.
func mergeOverrides(src stanza, target Rules) Rules {
	if src.atomic {
		return src.rules
	}
	out := make(Rules, len(target)+len(src.rules))
	for id, r := range target {
		out[id] = r
	}
	for id, r := range src.rules {
		out[id] = r
	}
	return out
}

// ownRules is what a policy yields alone: its defaults overlaid by its
// overrides (the fold of its own entries).
func ownRules(defaults, overrides *stanza) Rules {
	var acc Rules
	if defaults != nil {
		acc = mergeDefaults(*defaults, acc)
	}
	if overrides != nil {
		acc = mergeOverrides(*overrides, acc)
	}
	return acc
}

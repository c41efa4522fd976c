package review

import (
	"context"
	"reflect"
	"sort"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/access"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
)

// Changes turns the outcomes into the changes u may see, sorted: those of
// EffectivePolicies checker lets u read (every one when checker is nil;
// the others are counted in HiddenChanges), their values as redactor
// shows them to u (all of them when it is nil).
func Changes(ctx context.Context, u user.Info, outcomes []compute.Outcome, checker *access.Checker, redactor *access.Redactor) v1alpha1.EffectivePolicyReviewStatus {
	var s v1alpha1.EffectivePolicyReviewStatus
	for _, o := range outcomes {
		c := v1alpha1.EffectivePolicyChange{Resource: "effectivepolicies", Namespace: o.Key.Namespace, Name: o.Key.Name}
		if o.Key.Namespace == "" {
			c.Resource = "clustereffectivepolicies"
		}
		before, after := targetsOf(o.Before), targetsOf(o.After)
		switch {
		case o.Before == nil && o.After == nil, reflect.DeepEqual(before, after) && (o.Before == nil) == (o.After == nil):
			continue
		case o.Before == nil:
			c.Change = v1alpha1.ChangeAdded
		case o.After == nil:
			c.Change = v1alpha1.ChangeDeleted
		default:
			c.Change = v1alpha1.ChangeModified
		}
		if !checker.EffectivePolicyVisible(ctx, u, o.Key.Namespace) {
			s.HiddenChanges++
			continue
		}
		// What changed is found before redaction, so that a change of a
		// sensitive value shows as one (redacted on both sides).
		b, a := changedOnly(before, after)
		c.Before.Targets, c.After.Targets = redactor.RedactTargets(ctx, u, b), redactor.RedactTargets(ctx, u, a)
		s.Changes = append(s.Changes, c)
	}
	sort.Slice(s.Changes, func(i, j int) bool {
		a, b := s.Changes[i], s.Changes[j]
		if a.Resource != b.Resource {
			return a.Resource < b.Resource
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return s
}

// changedOnly keeps, of a modified EffectivePolicy's targets, those that
// change, and in them the policy kinds that change: a Gateway-level edit
// modifies hundreds of EffectivePolicies, most of whose content (other
// targets sharing the name, other policy kinds) stays as it is, and the
// answer would otherwise repeat all of it twice.
func changedOnly(before, after []v1alpha1.Target) ([]v1alpha1.Target, []v1alpha1.Target) {
	type key struct{ group, kind, name string }
	index := func(ts []v1alpha1.Target) map[key]*v1alpha1.Target {
		m := make(map[key]*v1alpha1.Target, len(ts))
		for i := range ts {
			m[key{ts[i].Group, ts[i].Kind, ts[i].Name}] = &ts[i]
		}
		return m
	}
	b, a := index(before), index(after)
	var outB, outA []v1alpha1.Target
	for _, t := range before {
		k := key{t.Group, t.Kind, t.Name}
		if other, ok := a[k]; ok {
			if pb, pa := changedPolicies(t.Policies, other.Policies); len(pb)+len(pa) > 0 {
				tb, ta := t, *other
				tb.Policies, ta.Policies = pb, pa
				outB, outA = append(outB, tb), append(outA, ta)
			}
			continue
		}
		outB = append(outB, t)
	}
	for _, t := range after {
		if _, ok := b[key{t.Group, t.Kind, t.Name}]; !ok {
			outA = append(outA, t)
		}
	}
	return outB, outA
}

// changedPolicies keeps the policy kinds of one target that differ.
func changedPolicies(before, after []v1alpha1.TargetPolicy) ([]v1alpha1.TargetPolicy, []v1alpha1.TargetPolicy) {
	type key struct{ group, kind string }
	a := make(map[key]*v1alpha1.TargetPolicy, len(after))
	for i := range after {
		a[key{after[i].Group, after[i].Kind}] = &after[i]
	}
	seen := make(map[key]bool, len(before))
	var outB, outA []v1alpha1.TargetPolicy
	for _, p := range before {
		k := key{p.Group, p.Kind}
		seen[k] = true
		other, ok := a[k]
		switch {
		case !ok:
			outB = append(outB, p)
		case !reflect.DeepEqual(p, *other):
			outB, outA = append(outB, p), append(outA, *other)
		}
	}
	for _, p := range after {
		if !seen[key{p.Group, p.Kind}] {
			outA = append(outA, p)
		}
	}
	return outB, outA
}

// targetsOf returns the targets of an output (nil: none).
func targetsOf(obj runtime.Object) []v1alpha1.Target {
	if obj == nil {
		return nil
	}
	t, _ := encoded.TargetsOf(obj)
	return t
}

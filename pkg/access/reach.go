package access

import (
	"context"

	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/klog/v2"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
)

// ReachFilter removes from a PolicyReach (or ClusterPolicyReach) every
// target in a namespace where the caller may not get effectivepolicies
// (cluster-scoped targets: clustereffectivepolicies), docs/spec.md §8: a reached
// target is then counted in hiddenTargets (and still in summary), a named
// one (attachedTo) left out. No answer names an object whose effective
// policy the caller may not read.
type ReachFilter struct{ access *Checker }

// NewReachFilter returns a ReachFilter deciding with access.
func NewReachFilter(access *Checker) *ReachFilter { return &ReachFilter{access: access} }

// ForRequest returns the filter of the caller of ctx (a watch keeps it for
// its life; decisions still expire).
func (f *ReachFilter) ForRequest(ctx context.Context) func(*encoded.Object) *encoded.Object {
	u, _ := genericapirequest.UserFrom(ctx)
	return func(o *encoded.Object) *encoded.Object { return f.Filter(ctx, u, o) }
}

// Filter returns o as u may see it: o itself when u may read the effective
// policies of every namespace it names (decided from its summary, without
// decoding), else a new Object. o is never modified.
func (f *ReachFilter) Filter(ctx context.Context, u user.Info, o *encoded.Object) *encoded.Object {
	visible := f.visibility(ctx, u)
	if s := o.Summary; s != nil && s.Reach != nil {
		all := true
		for _, ns := range s.Reach.Namespaces {
			if !visible(ns) {
				all = false
				break
			}
		}
		if all {
			return o
		}
	}
	policies, err := o.Policies()
	if err != nil {
		// Unreadable bytes: serving o fails the request (the encoder meets
		// the same error), which shows nothing.
		return o
	}
	changed := false
	for i := range policies {
		p := &policies[i]
		kept := p.Reaches[:0]
		for _, r := range p.Reaches {
			if visible(r.Target.Namespace) {
				kept = append(kept, r)
				continue
			}
			p.HiddenTargets++
			changed = true
		}
		p.Reaches = kept
		named := p.AttachedTo[:0]
		for _, a := range p.AttachedTo {
			if visible(a.Target.Namespace) {
				named = append(named, a)
			} else {
				changed = true
			}
		}
		p.AttachedTo = named
	}
	if !changed {
		return o
	}
	out, err := o.WithPolicies(policies)
	if err != nil {
		// Cannot happen (the policies were encoded before); should it all
		// the same, show nothing rather than a hidden name.
		klog.ErrorS(err, "Encoding a filtered reach failed; serving it without policies", "namespace", o.Namespace, "name", o.Name)
		out, _ = o.WithPolicies(nil)
	}
	return out
}

// visibility returns whether u may see targets in a namespace ("": the
// cluster-scoped ones), asking once per namespace and request. A user
// allowed in every namespace is asked once.
func (f *ReachFilter) visibility(ctx context.Context, u user.Info) func(ns string) bool {
	seen := map[string]bool{}
	everywhere, asked := false, false
	return func(ns string) bool {
		if v, ok := seen[ns]; ok {
			return v
		}
		var v bool
		if ns == "" {
			v = f.access.Allowed(ctx, u, clusterEffectivePolicies, "")
		} else {
			if !asked {
				everywhere, asked = f.access.Allowed(ctx, u, effectivePolicies, ""), true
			}
			v = everywhere || f.access.Allowed(ctx, u, effectivePolicies, ns)
		}
		seen[ns] = v
		return v
	}
}

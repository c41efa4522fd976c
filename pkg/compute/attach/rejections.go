package attach

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
)

// Whole-policy rejections: under some profiles (semantics.WholePolicyRejecter) a policy that
// loses a same-target rule on one target is rejected on all of them, so what takes effect at a
// node depends on the policy's other targets. The engine settles policy.RejectedBy after every
// mutation that changed an attachment of such a kind, and treats a policy whose verdict
// changed as edited: its attachment nodes get new generations (memoised folds and orders are
// recomputed here) and its reach is added to the affected keys (by the engine).

// SettleRejections recomputes RejectedBy for every kind whose attachments changed, gives the
// attachment nodes of every policy whose verdict changed new generations, and returns those
// policies.
func (x *Index) SettleRejections() []*semantics.Policy {
	var changed []*semantics.Policy
	for _, ki := range x.kinds {
		if !ki.rejectDirty {
			continue
		}
		ki.rejectDirty = false
		r, ok := ki.Kind.Profile.(semantics.WholePolicyRejecter)
		if !ok {
			continue
		}
		now := r.Rejections(ki.Kind.GK.Kind, ki.at)
		for _, p := range attachedPolicies(ki) {
			by := now[p]
			same := (by == nil) == (p.RejectedBy == nil) && (by == nil || by.ID == p.RejectedBy.ID)
			p.RejectedBy = by
			if same {
				continue
			}
			for _, a := range p.Resolution.Attachments {
				if a.Invalid == "" {
					x.touch(ki, a.Node)
				}
			}
			changed = append(changed, p)
		}
	}
	return changed
}

// attachedPolicies lists the policies with a valid attachment of kind ki, once each.
func attachedPolicies(ki *KindIndex) []*semantics.Policy {
	seen := map[*semantics.Policy]bool{}
	var out []*semantics.Policy
	for _, ps := range ki.at {
		for _, p := range ps {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

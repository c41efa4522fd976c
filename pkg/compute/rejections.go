package compute

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// Whole-policy rejections: under some profiles (semantics.WholePolicyRejecter) a policy that loses a
// same-target rule on one target is rejected on all of them, so what takes effect at a node
// depends on the policy's other targets. The state settles policy.RejectedBy after every
// mutation that changed an attachment of such a kind, and treats a policy whose verdict
// changed as edited: its attachment nodes get new generations (memoised folds and orders are
// recomputed) and its reach is added to the affected keys.

// touch gives node n of kind ki a new attachment generation.
func (st *state) touch(ki *kindIndex, n topology.NodeID) {
	st.attGen++
	ki.gen[n] = st.attGen
	ki.changed = st.attGen
}

// settleRejections recomputes RejectedBy for every kind whose attachments changed and
// returns keys with the reach of every policy whose verdict changed added.
func (st *state) settleRejections(keys []Key) []Key {
	var ks keySet
	for _, ki := range st.kinds {
		if !ki.rejectDirty {
			continue
		}
		ki.rejectDirty = false
		r, ok := ki.pk.Profile.(semantics.WholePolicyRejecter)
		if !ok {
			continue
		}
		now := r.Rejections(ki.pk.GK.Kind, ki.at)
		for _, p := range attachedPolicies(ki) {
			by := now[p]
			same := (by == nil) == (p.RejectedBy == nil) && (by == nil || by.ID == p.RejectedBy.ID)
			p.RejectedBy = by
			if same {
				continue
			}
			for _, a := range p.Resolution.Attachments {
				if a.Invalid == "" {
					st.touch(ki, a.Node)
				}
			}
			if ks == nil {
				ks = keySet{}
				for _, k := range keys {
					ks[k] = true
				}
			}
			st.affect(p, ks)
		}
	}
	if ks == nil {
		return keys
	}
	return ks.sorted()
}

// attachedPolicies lists the policies with a valid attachment of kind ki, once each.
func attachedPolicies(ki *kindIndex) []*semantics.Policy {
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

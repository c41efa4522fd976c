package compute

// Whole-policy rejections (pkg/compute/attach settles them): a policy whose verdict changed
// is treated as edited, its reach added to the affected keys.

// settleRejections settles the whole-policy rejections and returns keys with the reach of
// every policy whose verdict changed added.
func (st *state) settleRejections(keys []Key) []Key {
	changed := st.att.SettleRejections()
	if len(changed) == 0 {
		return keys
	}
	ks := keySet{}
	for _, k := range keys {
		ks[k] = true
	}
	for _, p := range changed {
		st.affect(p, ks)
	}
	return ks.sorted()
}

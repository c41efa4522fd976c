package topology

// ReferenceGrants (Gateway API): which references from one namespace into
// another they allow. They add no node to the graph; they decide whether a
// backend hangs under a rule of another namespace, and whether a policy may
// target an object of another namespace.

// Grants holds the ReferenceGrants by namespace, then name.
type Grants map[string]map[string]*ReferenceGrant

// GrantNamespace is where a ReferenceGrant for target t must live.
func GrantNamespace(t NodeID) string {
	if IsNamespaceNode(t) {
		return t.Name
	}
	return t.Namespace
}

// Allows reports whether a ReferenceGrant in t's namespace lets objects of group/kind in
// namespace fromNS refer to t.
func (gs Grants) Allows(group, kind, fromNS string, t NodeID) bool {
	for _, g := range gs[GrantNamespace(t)] {
		from := false
		for _, f := range g.From {
			if f.Group == group && f.Kind == kind && f.Namespace == fromNS {
				from = true
				break
			}
		}
		if !from {
			continue
		}
		for _, to := range g.To {
			if to.Group == t.Group && to.Kind == t.Kind && (to.Name == "" || to.Name == t.Name) {
				return true
			}
		}
	}
	return false
}

// Apply puts ReferenceGrant ns/name as spec describes, or removes it
// when add is false; it reports false when there was nothing to remove.
func (gs Grants) Apply(ns, name string, add bool, spec map[string]interface{}) bool {
	if add {
		if gs[ns] == nil {
			gs[ns] = map[string]*ReferenceGrant{}
		}
		gs[ns][name] = ParseGrant(spec)
		return true
	}
	if gs[ns] == nil || gs[ns][name] == nil {
		return false
	}
	delete(gs[ns], name)
	if len(gs[ns]) == 0 {
		delete(gs, ns)
	}
	return true
}

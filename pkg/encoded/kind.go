package encoded

// Kind is which of the served kinds an Object (or List) is. The four share
// one stored form: metadata, a summary, and one compressed list (the
// targets of an effective policy, the policies of a reach).
type Kind uint8

// The served kinds.
const (
	KindEffectivePolicy Kind = iota
	KindClusterEffectivePolicy
	KindPolicyReach
	KindClusterPolicyReach
)

var kindNames = [...]string{
	KindEffectivePolicy:        "EffectivePolicy",
	KindClusterEffectivePolicy: "ClusterEffectivePolicy",
	KindPolicyReach:            "PolicyReach",
	KindClusterPolicyReach:     "ClusterPolicyReach",
}

// String returns the API kind.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Unknown"
}

// Cluster reports whether the kind is cluster-scoped.
func (k Kind) Cluster() bool { return k == KindClusterEffectivePolicy || k == KindClusterPolicyReach }

// Reach reports whether the kind is a PolicyReach or ClusterPolicyReach.
func (k Kind) Reach() bool { return k == KindPolicyReach || k == KindClusterPolicyReach }

// field is the JSON name of the kind's compressed list.
func (k Kind) field() string {
	if k.Reach() {
		return "policies"
	}
	return "targets"
}

// kindNamed returns the Kind of an API kind name; ok=false for another name.
func kindNamed(s string) (Kind, bool) {
	for k, n := range kindNames {
		if n == s {
			return Kind(k), true
		}
	}
	return 0, false
}

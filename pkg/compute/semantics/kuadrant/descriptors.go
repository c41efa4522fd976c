package kuadrant

import (
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
)

const group = "kuadrant.io"

// Descriptors (semantics.Profile): the policy kinds of kuadrant.io v1.5. The inherited ones
// name their strategy in defaults/overrides (api/v1/merge_strategies.go: atomic, merge).
// DNSPolicy and TLSPolicy are Direct (api/v1/dnspolicy_types.go, tlspolicy_types.go: no
// defaults or overrides, a Gateway or one of its listeners as the only target): of several on
// one target the oldest is Accepted and the others Conflicted, and a listener policy takes
// its listener from a Gateway policy (direct.go).
func (Profile) Descriptors() []semantics.Descriptor {
	inherited := func(kind string) semantics.Descriptor {
		return semantics.Descriptor{
			Group: group, Kind: kind, Class: v1alpha1.ClassInherited, Semantics: semantics.Kuadrant,
			TargetRef:       []string{"spec.targetRef"},
			TargetRefs:      []string{"spec.targetRefs"},
			Defaults:        []string{"spec.defaults"},
			Overrides:       []string{"spec.overrides"},
			StrategyField:   "strategy",
			StrategyValues:  map[string]string{"atomic": semantics.StrategyAtomic, "merge": semantics.StrategyPatch},
			DefaultStrategy: semantics.StrategyAtomic,
		}
	}
	direct := func(kind string) semantics.Descriptor {
		return semantics.Descriptor{
			Group: group, Kind: kind, Class: v1alpha1.ClassDirect, Semantics: semantics.Kuadrant,
			TargetRef: []string{"spec.targetRef"}, TargetRefs: []string{"spec.targetRefs"},
		}
	}
	return []semantics.Descriptor{
		inherited("RateLimitPolicy"),
		inherited("AuthPolicy"),
		inherited("TokenRateLimitPolicy"),
		direct("DNSPolicy"),
		direct("TLSPolicy"),
	}
}

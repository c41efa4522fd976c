package istio

// EnvoyFilter (networking.istio.io), from istio.io/istio release-1.31:
//
//   - pilot/pkg/model/push_context.go EnvoyFilters: the filters of the root namespace and of the
//     workload's namespace that ShouldAttachPolicy attaches (by targetRefs, or by
//     workloadSelector.labels; none selects every workload of the namespace) are sorted by
//     priority (lowest first, 0 when unset), then the root namespace's before the others, then
//     creationTimestamp, then "<name>.<namespace>"; their patches are applied in that order.
//   - Every filter applies; none overrides another (a later patch may undo an earlier one, as
//     Envoy config patches do).
//   - EnvoyFilters matches with PolicyMatcherForProxy alone, without the Services a waypoint
//     serves, so a targetRef to a Service or ServiceEntry attaches nowhere.

import "github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"

const (
	networkingGroup = "networking.istio.io"
	envoyFilter     = "EnvoyFilter"
)

const envoyFilterRule = "Istio: every EnvoyFilter that reaches the workload applies, by priority (lowest first), then the root namespace's first, then by age"

// envoyFilterBefore is the order of EnvoyFilters in Istio's EnvoyFilters.
func envoyFilterBefore(a, b *semantics.Policy) bool {
	if pa, pb := envoyFilterPriority(a), envoyFilterPriority(b); pa != pb {
		return pa < pb
	}
	if r := rootFirst(a, b); r != 0 {
		return r < 0
	}
	if !a.Created.Equal(b.Created) {
		return a.Created.Before(b.Created)
	}
	return a.ID.Name+"."+a.ID.Namespace < b.ID.Name+"."+b.ID.Namespace
}

// envoyFilterPriority is spec.priority, 0 when unset (the proto's zero value).
func envoyFilterPriority(p *semantics.Policy) int64 {
	if v := priority(p); v != minPriority {
		return v
	}
	return 0
}

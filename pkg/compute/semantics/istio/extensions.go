package istio

// WasmPlugin and TrafficExtension (extensions.istio.io), from istio.io/istio release-1.31:
//
//   - pilot/pkg/config/kube/extensions/translate.go translateWasmPlugin: each WasmPlugin becomes a
//     TrafficExtension (same phase, priority, selector, targetRefs; the singular targetRef joins
//     targetRefs), and pilot handles TrafficExtensions only.
//   - pilot/pkg/model/push_context.go initTrafficExtensions sorts them by creation time;
//     TrafficExtensionsByListenerInfo looks in the workload's namespace first, then the root
//     namespace, keeps those ShouldAttachPolicy attaches (extensions.go MatchListener), groups
//     them by phase and sortByPriority sorts each phase stably by priority, highest first, an
//     unset priority counting as math.MinInt32 (last).
//   - pilot/pkg/networking/core/listener_builder.go (listener_waypoint.go alike) inserts the
//     phases AUTHN, AUTHZ, STATS, then the unspecified one.
//   - Every plugin applies; none overrides another.

import (
	"math"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
)

const (
	extensionsGroup  = "extensions.istio.io"
	wasmPlugin       = "WasmPlugin"
	trafficExtension = "TrafficExtension"
)

const extensionRule = "Istio: every %s that reaches the workload applies, by phase (AUTHN, AUTHZ, STATS, unspecified), then priority (highest first, unset last), then the workload namespace's before the root namespace's, each by age"

// phaseRank is the place of a plugin's phase in the filter chain.
func phaseRank(p *semantics.Policy) int {
	switch spec, _ := p.Raw["spec"].(map[string]interface{}); spec["phase"] {
	case "AUTHN":
		return 0
	case "AUTHZ":
		return 1
	case "STATS":
		return 2
	}
	return 3 // UNSPECIFIED_PHASE (WasmPlugin), UNSPECIFIED (TrafficExtension), or unset
}

// minPriority is the priority of a plugin that sets none (sortByPriority).
const minPriority = math.MinInt32

// priority is a plugin's spec.priority, minPriority when unset.
func priority(p *semantics.Policy) int64 {
	spec, _ := p.Raw["spec"].(map[string]interface{})
	switch v := spec["priority"].(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	case int:
		return int64(v)
	}
	return minPriority
}

// extensionBefore is Istio's order of two plugins of one kind at one workload.
func extensionBefore(a, b *semantics.Policy) bool {
	if ra, rb := phaseRank(a), phaseRank(b); ra != rb {
		return ra < rb
	}
	if pa, pb := priority(a), priority(b); pa != pb {
		return pa > pb
	}
	return raBefore(a, b) // lookup order: the workload's namespace, then the root; each by age
}

package istio

// Telemetry (telemetry.istio.io), from istio.io/istio release-1.31:
//
//   - pilot/pkg/model/telemetry.go getTelemetries sorts every Telemetry by creation time
//     (sortConfigByCreationTime). applicableTelemetries then takes, the later overriding the
//     earlier: the root namespace's namespace-wide Telemetry (no selector.matchLabels, no
//     targetRef(s)), the proxy namespace's one (unless it is the root), then every Telemetry of
//     the proxy's namespace that ShouldAttachPolicy attaches (targetRefs, else a selector), by
//     age. namespaceWideTelemetryConfig returns the oldest namespace-wide Telemetry of a
//     namespace: a younger one is never read.
//   - Tracing, mergeLogs (access logging) and mergeMetrics each merge their section of that
//     list their own way (telemetry_merge.go).
//   - A Gateway's listeners are of class Gateway, read in CLIENT mode (workloadMode;
//     networking/core/tracing.go takes the ClientSpec; MetricsForClass the ClientMetrics); a
//     waypoint's are of class SidecarInbound, read in SERVER mode.
//
// The effective spec is the one Telemetry spec that, alone, would configure the proxy as the
// merge does: per section what Istio ends with for the proxy's mode (telemetry_merge.go).

import (
	"sort"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/merge"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/semantics"
)

const (
	telemetryGroup = "telemetry.istio.io"
	telemetryKind  = "Telemetry"
)

const telemetryRule = "Istio: the root namespace's oldest namespace-wide Telemetry, then the workload namespace's oldest, then every Telemetry targeting or selecting the workload by age, the later overriding the earlier (tracing field by field, access logging and metrics per provider); a younger namespace-wide Telemetry is never read"

// Workload modes of Istio's telemetry API (telemetry.proto WorkloadMode).
const (
	modeClient = "CLIENT"
	modeServer = "SERVER"
)

// telemetryFold is the Telemetry Istio configures at a target of flavor.
func telemetryFold(es []semantics.FoldEntry, flavor string) semantics.FoldValue {
	fv := semantics.FoldValue{Totals: make([]int, len(es)), Apart: make([]bool, len(es))}
	order, conflicted := telemetryOrder(es, flavor, fv.Apart)
	fv.ConflictedBy = conflicted
	if len(order) == 0 {
		return fv
	}
	mode := modeClient
	if flavor != flavorGateway {
		mode = modeServer
	}
	o := &telemetryMerge{es: es, writes: make([]map[string]int, len(es))}
	root := &merge.Value{IsObj: true, Obj: map[string]*merge.Value{}, Src: order[len(order)-1]}
	for k, v := range map[string]*merge.Value{
		"tracing":       o.tracing(order, mode),
		"accessLogging": o.accessLogging(order, mode),
		"metrics":       o.metrics(order, mode),
	} {
		if v != nil {
			root.Obj[k] = v
		}
	}
	if len(root.Obj) == 0 { // Telemetries apply, but none says anything for this mode
		o.note(root.Src, "", 1)
	}
	for i, w := range o.writes {
		for _, n := range w {
			fv.Totals[i] += n
		}
	}
	fv.Acc = root
	return fv
}

// telemetryOrder is the entries Istio reads at a target of flavor, in applicableTelemetries'
// order; it marks the others apart, and names for each namespace-wide Telemetry that Istio
// never reads the one it reads instead (nil when there is none).
func telemetryOrder(es []semantics.FoldEntry, flavor string, apart []bool) ([]int, []*semantics.Policy) {
	var root, ns, workload []int
	seen := map[*semantics.Policy]bool{}
	for i := range es {
		p := es[i].Policy
		if seen[p] || !applies(es[i], flavor) {
			apart[i] = true
			continue
		}
		seen[p] = true
		switch {
		case !namespaceWide(p):
			workload = append(workload, i)
		case p.ID.Namespace == RootNamespace:
			root = append(root, i)
		default:
			ns = append(ns, i)
		}
	}
	byAge := func(idx []int) {
		sort.SliceStable(idx, func(a, b int) bool { return createdBefore(es[idx[a]].Policy, es[idx[b]].Policy) })
	}
	var order []int
	var conflicted []*semantics.Policy
	for _, level := range [][]int{root, ns} {
		if len(level) == 0 {
			continue
		}
		byAge(level)
		order = append(order, level[0])
		for _, i := range level[1:] {
			if conflicted == nil {
				conflicted = make([]*semantics.Policy, len(es))
			}
			conflicted[i] = es[level[0]].Policy
		}
	}
	byAge(workload)
	return append(order, workload...), conflicted
}

// namespaceWide says whether Istio reads p as its namespace's Telemetry: no targetRef(s) and
// no selector labels (namespaceWideTelemetryConfig; an empty selector counts as none).
func namespaceWide(p *semantics.Policy) bool {
	spec, _ := p.Raw["spec"].(map[string]interface{})
	if spec["targetRef"] != nil {
		return false
	}
	if refs, _ := spec["targetRefs"].([]interface{}); len(refs) > 0 {
		return false
	}
	sel, _ := spec["selector"].(map[string]interface{})
	ml, _ := sel["matchLabels"].(map[string]interface{})
	return len(ml) == 0
}

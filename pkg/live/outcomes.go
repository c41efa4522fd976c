package live

// Outcome metrics: how many sources (a policy, or one stanza of it,
// reaching one target) have each outcome, by policy kind and semantics, and
// how many policies reach nothing. They are kept from the PolicyReaches the
// worker builds (reaches.go): each rebuilt reach replaces its policy's
// previous contribution, so an update costs the kinds of the policies
// rebuilt, never a walk over every output.

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/component-base/metrics"
	"k8s.io/klog/v2"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// maxDiscoveredKinds bounds the policy kinds outside the built-in
// descriptors (found by label or schema, or described by a descriptor
// file) that get series of their own; the kinds seen after those are
// counted under group and kind OtherKindLabel. docs/operations.md states
// the bound.
const maxDiscoveredKinds = 20

// OtherKindLabel is the group and kind label of the policy kinds past the
// bound.
const OtherKindLabel = "other"

// outcomes lists the outcome label values, in the order of kindTally.counts.
var outcomes = [...]v1alpha1.Outcome{
	v1alpha1.OutcomeEnforced, v1alpha1.OutcomePartiallyEnforced, v1alpha1.OutcomeOverridden,
	v1alpha1.OutcomeConflicted, v1alpha1.OutcomeInvalid,
}

var (
	policySources = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      subsystem,
		Name:           "policy_sources",
		Help:           "Sources (a policy, or one stanza of it, reaching one target) by policy group, kind, semantics and outcome.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"group", "kind", "semantics", "outcome"})
	policiesKnown = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      subsystem,
		Name:           "policies",
		Help:           "Policies by policy group, kind and semantics.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"group", "kind", "semantics"})
	policiesReachingNothing = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      subsystem,
		Name:           "policies_reaching_nothing",
		Help:           "Policies that reach no target (no resolved target, or targets with nothing below them), by policy group, kind and semantics.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"group", "kind", "semantics"})
)

// kindSeries is the labels of one policy kind's series.
type kindSeries struct{ group, kind, semantics string }

// seriesCounts are one kind series' totals and its gauges (looked up once:
// a lookup hashes the labels).
type seriesCounts struct {
	sources                 [len(outcomes)]int
	policies, empty         int
	sourceGauges            [len(outcomes)]metrics.GaugeMetric
	policyGauge, emptyGauge metrics.GaugeMetric
}

// kindTally is what one policy of one kind contributes.
type kindTally struct {
	gk        schema.GroupKind
	semantics string
	counts    [len(outcomes)]int
	targets   int
}

// outcomeMetrics holds every policy's contribution and the totals the
// gauges show. Only the worker uses it.
type outcomeMetrics struct {
	sources, known, nothing *metrics.GaugeVec

	byPolicy map[compute.Key][]kindTally
	series   map[kindSeries]*seriesCounts
	// touched are the series whose counts changed since the last flush.
	touched map[*seriesCounts]struct{}

	builtin    map[schema.GroupKind]bool
	discovered map[schema.GroupKind]bool
}

func newOutcomeMetrics(sources, known, nothing *metrics.GaugeVec) *outcomeMetrics {
	m := &outcomeMetrics{
		sources: sources, known: known, nothing: nothing,
		byPolicy: map[compute.Key][]kindTally{}, series: map[kindSeries]*seriesCounts{},
		touched: map[*seriesCounts]struct{}{},
		builtin: map[schema.GroupKind]bool{}, discovered: map[schema.GroupKind]bool{},
	}
	for _, d := range compute.BuiltinDescriptors() {
		m.builtin[schema.GroupKind{Group: d.Group, Kind: d.Kind}] = true
	}
	return m
}

// tallyOf reads what a built PolicyReach or ClusterPolicyReach counts.
func tallyOf(obj runtime.Object) []kindTally {
	var ps []v1alpha1.ReachPolicy
	switch o := obj.(type) {
	case *v1alpha1.PolicyReach:
		ps = o.Policies
	case *v1alpha1.ClusterPolicyReach:
		ps = o.Policies
	default:
		return nil
	}
	out := make([]kindTally, len(ps))
	for i, p := range ps {
		s := p.Summary
		out[i] = kindTally{
			gk: schema.GroupKind{Group: p.Group, Kind: p.Kind}, semantics: p.Semantics, targets: int(s.Targets),
			counts: [len(outcomes)]int{int(s.Enforced), int(s.PartiallyEnforced), int(s.Overridden), int(s.Conflicted), int(s.Invalid)},
		}
	}
	return out
}

// set replaces the contribution of policy key k (nil: it is gone). The
// gauges change at the next flush.
func (m *outcomeMetrics) set(k compute.Key, tallies []kindTally) {
	for _, t := range m.byPolicy[k] {
		m.add(t, -1)
	}
	if len(tallies) == 0 {
		delete(m.byPolicy, k)
	} else {
		m.byPolicy[k] = tallies
	}
	for _, t := range tallies {
		m.add(t, 1)
	}
}

// flush sets the gauges of the series whose counts changed.
func (m *outcomeMetrics) flush() {
	for c := range m.touched {
		for i, g := range c.sourceGauges {
			g.Set(float64(c.sources[i]))
		}
		c.policyGauge.Set(float64(c.policies))
		c.emptyGauge.Set(float64(c.empty))
		delete(m.touched, c)
	}
}

// add adds (sign 1) or takes away (-1) one policy's tally.
func (m *outcomeMetrics) add(t kindTally, sign int) {
	c := m.countsOf(m.labelsOf(t.gk, t.semantics))
	for i, n := range t.counts {
		c.sources[i] += sign * n
	}
	c.policies += sign
	if t.targets == 0 {
		c.empty += sign
	}
	m.touched[c] = struct{}{}
}

// countsOf returns the counts of series s, creating it (and its gauges).
func (m *outcomeMetrics) countsOf(s kindSeries) *seriesCounts {
	c := m.series[s]
	if c != nil {
		return c
	}
	c = &seriesCounts{
		policyGauge: m.known.WithLabelValues(s.group, s.kind, s.semantics),
		emptyGauge:  m.nothing.WithLabelValues(s.group, s.kind, s.semantics),
	}
	for i, o := range outcomes {
		c.sourceGauges[i] = m.sources.WithLabelValues(s.group, s.kind, s.semantics, string(o))
	}
	m.series[s] = c
	return c
}

// labelsOf returns the labels of kind gk: its own for the built-in kinds and
// the first maxDiscoveredKinds others seen, OtherKindLabel after that. A
// kind keeps its labels for the life of the process, so a series never
// changes kind.
func (m *outcomeMetrics) labelsOf(gk schema.GroupKind, semantics string) kindSeries {
	if m.builtin[gk] || m.discovered[gk] {
		return kindSeries{gk.Group, gk.Kind, semantics}
	}
	if len(m.discovered) < maxDiscoveredKinds {
		m.discovered[gk] = true
		return kindSeries{gk.Group, gk.Kind, semantics}
	}
	klog.V(4).InfoS("Policy kind counted as other in the outcome metrics", "group", gk.Group, "kind", gk.Kind, "bound", maxDiscoveredKinds)
	return kindSeries{OtherKindLabel, OtherKindLabel, semantics}
}

package live

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// newTestOutcomes returns outcomeMetrics on gauges of a registry of their
// own (component-base metrics do nothing until registered).
func newTestOutcomes(t *testing.T) *outcomeMetrics {
	t.Helper()
	vec := func(name string, labels ...string) *metrics.GaugeVec {
		return metrics.NewGaugeVec(&metrics.GaugeOpts{Name: name, Help: name, StabilityLevel: metrics.ALPHA}, labels)
	}
	m := newOutcomeMetrics(vec("sources", "group", "kind", "semantics", "outcome"),
		vec("known", "group", "kind", "semantics"), vec("nothing", "group", "kind", "semantics"))
	metrics.NewKubeRegistry().MustRegister(m.sources, m.known, m.nothing)
	return m
}

func gaugeOf(t *testing.T, v *metrics.GaugeVec, labels ...string) float64 {
	t.Helper()
	g, err := testutil.GetGaugeMetricValue(v.WithLabelValues(labels...))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// reachOf is a PolicyReach of one policy of kind BackendTLSPolicy (a
// built-in kind) with the outcomes given, one target each.
func reachOf(name string, outcomes ...v1alpha1.Outcome) (compute.Key, runtime.Object) {
	rp := v1alpha1.ReachPolicy{Group: "gateway.networking.k8s.io", Kind: "BackendTLSPolicy", Semantics: "GatewayAPI"}
	for _, o := range outcomes {
		rp.Reaches = append(rp.Reaches, v1alpha1.Reach{Outcome: o})
		rp.Summary.Targets++
		switch o {
		case v1alpha1.OutcomeEnforced:
			rp.Summary.Enforced++
		case v1alpha1.OutcomeConflicted:
			rp.Summary.Conflicted++
		case v1alpha1.OutcomeInvalid:
			rp.Summary.Invalid++
		}
	}
	return compute.Key{Namespace: "ns", Name: name},
		&v1alpha1.PolicyReach{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Policies: []v1alpha1.ReachPolicy{rp}}
}

// The gauges follow each policy's latest reach: a rebuilt reach replaces
// the policy's counts, a policy gone takes them away.
func TestOutcomeMetricsFollowReaches(t *testing.T) {
	type step struct {
		name     string
		outcomes []v1alpha1.Outcome
		gone     bool
	}
	type want struct{ enforced, conflicted, invalid, policies, nothing float64 }
	E, C, I := v1alpha1.OutcomeEnforced, v1alpha1.OutcomeConflicted, v1alpha1.OutcomeInvalid
	cases := []struct {
		name  string
		steps []step
		want  want
	}{
		{"one policy, two targets", []step{{name: "a", outcomes: []v1alpha1.Outcome{E, C}}}, want{1, 1, 0, 1, 0}},
		{"rebuilt: the conflict resolved", []step{{name: "a", outcomes: []v1alpha1.Outcome{E, C}}, {name: "a", outcomes: []v1alpha1.Outcome{E, E}}}, want{2, 0, 0, 1, 0}},
		{"a policy reaching nothing", []step{{name: "a", outcomes: []v1alpha1.Outcome{I}}, {name: "b"}}, want{0, 0, 1, 2, 1}},
		{"the policy reaching nothing deleted", []step{{name: "a", outcomes: []v1alpha1.Outcome{E}}, {name: "b"}, {name: "b", gone: true}}, want{1, 0, 0, 1, 0}},
		{"every policy deleted", []step{{name: "a", outcomes: []v1alpha1.Outcome{C}}, {name: "a", gone: true}}, want{0, 0, 0, 0, 0}},
		{"a policy that starts reaching something", []step{{name: "b"}, {name: "b", outcomes: []v1alpha1.Outcome{E}}}, want{1, 0, 0, 1, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestOutcomes(t)
			for _, s := range tc.steps {
				k, obj := reachOf(s.name, s.outcomes...)
				if s.gone {
					m.set(k, nil)
				} else {
					m.set(k, tallyOf(obj))
				}
			}
			m.flush()
			l := []string{"gateway.networking.k8s.io", "BackendTLSPolicy", "GatewayAPI"}
			got := want{
				enforced:   gaugeOf(t, m.sources, append(l, "Enforced")...),
				conflicted: gaugeOf(t, m.sources, append(l, "Conflicted")...),
				invalid:    gaugeOf(t, m.sources, append(l, "Invalid")...),
				policies:   gaugeOf(t, m.known, l...),
				nothing:    gaugeOf(t, m.nothing, l...),
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// Kinds outside the built-in descriptors get series of their own up to
// maxDiscoveredKinds; the ones after share the "other" series.
func TestOutcomeMetricsBoundKinds(t *testing.T) {
	m := newTestOutcomes(t)
	const extra = 3
	for i := range maxDiscoveredKinds + extra {
		kind := fmt.Sprintf("Kind%02d", i)
		obj := &v1alpha1.PolicyReach{Policies: []v1alpha1.ReachPolicy{{
			Group: "example.com", Kind: kind, Semantics: v1alpha1.SemanticsAssumed,
			Summary: v1alpha1.ReachSummary{Targets: 1, Conflicted: 1},
		}}}
		m.set(compute.Key{Namespace: "ns", Name: kind}, tallyOf(obj))
	}
	m.flush()
	for _, tc := range []struct {
		group, kind string
		want        float64
	}{
		{"example.com", "Kind00", 1},
		{"example.com", fmt.Sprintf("Kind%02d", maxDiscoveredKinds-1), 1},
		{OtherKindLabel, OtherKindLabel, extra},
	} {
		if got := gaugeOf(t, m.sources, tc.group, tc.kind, v1alpha1.SemanticsAssumed, "Conflicted"); got != tc.want {
			t.Errorf("%s/%s Conflicted: got %v, want %v", tc.group, tc.kind, got, tc.want)
		}
	}
	// Series of their own: the discovered kinds plus one "other".
	if got := len(m.series); got != maxDiscoveredKinds+1 {
		t.Errorf("%d kind series, want %d", got, maxDiscoveredKinds+1)
	}
	// A built-in kind is always its own, whatever the bound.
	k, obj := reachOf("tls", v1alpha1.OutcomeEnforced)
	m.set(k, tallyOf(obj))
	m.flush()
	if got := gaugeOf(t, m.sources, "gateway.networking.k8s.io", "BackendTLSPolicy", "GatewayAPI", "Enforced"); got != 1 {
		t.Errorf("built-in kind past the bound: got %v, want 1", got)
	}
}

// BenchmarkOutcomeMetricsSet: what the worker adds per policy reach it
// rebuilds (one kind, the common case): the policy's old counts taken away,
// the new ones added; and the gauges set once per batch (batchSize reaches).
func BenchmarkOutcomeMetricsSet(b *testing.B) {
	vec := func(name string, labels ...string) *metrics.GaugeVec {
		return metrics.NewGaugeVec(&metrics.GaugeOpts{Name: name, Help: name, StabilityLevel: metrics.ALPHA}, labels)
	}
	m := newOutcomeMetrics(vec("sources", "group", "kind", "semantics", "outcome"),
		vec("known", "group", "kind", "semantics"), vec("nothing", "group", "kind", "semantics"))
	metrics.NewKubeRegistry().MustRegister(m.sources, m.known, m.nothing)
	const policies = 5000
	tallies := make([][]kindTally, policies)
	for i := range tallies {
		_, obj := reachOf(fmt.Sprint(i), v1alpha1.OutcomeEnforced, v1alpha1.OutcomeConflicted)
		tallies[i] = tallyOf(obj)
		m.set(compute.Key{Namespace: "ns", Name: fmt.Sprint(i)}, tallies[i])
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := i % policies
		m.set(compute.Key{Namespace: "ns", Name: fmt.Sprint(p)}, tallies[p])
		if i%batchSize == 0 {
			m.flush()
		}
	}
}

package versioned

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/component-base/metrics/testutil"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// TestWatchersGauge: effectivepolicy_watchers{resource} counts a watch from
// Watch until Stop, and until its context ends.
func TestWatchersGauge(t *testing.T) {
	const resource = "watchersgaugetest" // a label no other test uses
	s := New[*v1alpha1.EffectivePolicy](Options{Namespaced: true, Resource: schema.GroupResource{Group: "effectivepolicy.dev", Resource: resource}})
	value := func() float64 {
		t.Helper()
		v, err := testutil.GetGaugeMetricValue(watchersGauge.WithLabelValues(resource))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	waitFor := func(want float64) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for value() != want {
			if time.Now().After(deadline) {
				t.Fatalf("effectivepolicy_watchers{resource=%q} = %v, want %v", resource, value(), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor(0)
	w1, err := s.Watch(context.Background(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := s.Watch(ctx, "ns", 0); err != nil {
		t.Fatal(err)
	}
	waitFor(2)
	w1.Stop()
	w1.Stop() // a second Stop does not count twice
	waitFor(1)
	cancel()
	waitFor(0)
}

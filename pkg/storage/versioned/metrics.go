package versioned

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// watchersGauge counts the watches open on the Stores, by resource
// (Options.Resource.Resource). A watch counts from Store.Watch until it is
// stopped: by the client, by its context, or by the Store when it falls too
// far behind.
var watchersGauge = metrics.NewGaugeVec(&metrics.GaugeOpts{
	Subsystem:      "effectivepolicy",
	Name:           "watchers",
	Help:           "Watches open on the served resources.",
	StabilityLevel: metrics.ALPHA,
}, []string{"resource"})

var registerOnce sync.Once

func registerMetrics() {
	registerOnce.Do(func() { legacyregistry.MustRegister(watchersGauge) })
}

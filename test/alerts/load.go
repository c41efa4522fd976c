package main

import (
	"context"
	"fmt"
	"os"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/tsdb"
)

// load appends every sample of the text exposition in file to db at t,
// with job and instance labels as a scrape adds them.
func load(ctx context.Context, db *tsdb.DB, job, file string, t time.Time) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(f)
	if err != nil {
		return err
	}
	app := db.Appender(ctx)
	ts := t.UnixMilli()
	n := 0
	for name, mf := range families {
		for _, m := range mf.GetMetric() {
			for _, s := range samplesOf(name, mf.GetType(), m) {
				b := labels.NewBuilder(labels.EmptyLabels())
				for _, lp := range m.GetLabel() {
					b.Set(lp.GetName(), lp.GetValue())
				}
				for k, v := range s.extra {
					b.Set(k, v)
				}
				b.Set(labels.MetricName, s.name)
				b.Set("job", job)
				b.Set("instance", job)
				if _, err := app.Append(0, b.Labels(), ts, s.value); err != nil {
					_ = app.Rollback()
					return fmt.Errorf("%s: %w", s.name, err)
				}
				n++
			}
		}
	}
	if n == 0 {
		_ = app.Rollback()
		return fmt.Errorf("no samples")
	}
	return app.Commit()
}

type sample struct {
	name  string
	extra map[string]string
	value float64
}

// samplesOf flattens one metric into the series Prometheus stores for it
// (histograms and summaries as _bucket/quantile, _sum and _count).
func samplesOf(name string, typ dto.MetricType, m *dto.Metric) []sample {
	switch typ {
	case dto.MetricType_COUNTER:
		return []sample{{name: name, value: m.GetCounter().GetValue()}}
	case dto.MetricType_GAUGE:
		return []sample{{name: name, value: m.GetGauge().GetValue()}}
	case dto.MetricType_HISTOGRAM:
		h := m.GetHistogram()
		out := []sample{{name: name + "_sum", value: h.GetSampleSum()}, {name: name + "_count", value: float64(h.GetSampleCount())}}
		for _, b := range h.GetBucket() {
			out = append(out, sample{name: name + "_bucket", extra: map[string]string{"le": fmt.Sprint(b.GetUpperBound())}, value: float64(b.GetCumulativeCount())})
		}
		return append(out, sample{name: name + "_bucket", extra: map[string]string{"le": "+Inf"}, value: float64(h.GetSampleCount())})
	case dto.MetricType_SUMMARY:
		s := m.GetSummary()
		out := []sample{{name: name + "_sum", value: s.GetSampleSum()}, {name: name + "_count", value: float64(s.GetSampleCount())}}
		for _, q := range s.GetQuantile() {
			out = append(out, sample{name: name, extra: map[string]string{"quantile": fmt.Sprint(q.GetQuantile())}, value: q.GetValue()})
		}
		return out
	default:
		return []sample{{name: name, value: m.GetUntyped().GetValue()}}
	}
}

package edits

import (
	"context"
	"fmt"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/measure"
	"github.com/effectivepolicy-dev/effectivepolicy/test/scale/e2ebench/report"
)

// Measure times reps edits of policy p (its marker field named field) to
// the last watch event of each, after an unmeasured warm-up edit that finds
// the outputs to expect.
func Measure(ctx context.Context, dc dynamic.Interface, w *Watcher, name, field string, p *measure.PolicyReach, reps int, timeout time.Duration) (report.EditResult, error) {
	res := report.EditResult{Name: name, Policy: p.ID, Attached: p.Attached, ListedReach: len(p.Keys), NamedBy: p.Named, Reps: reps}
	var plural string
	for _, k := range scale.PolicyKinds {
		if k.Kind == p.Kind {
			plural = k.Plural
		}
	}
	if plural == "" {
		return res, fmt.Errorf("unknown policy kind %s", p.Kind)
	}
	ri := dc.Resource(schema.GroupVersionResource{Group: scale.PolicyGroup, Version: "v1", Resource: plural}).Namespace(p.NS)
	edit := func(i int) (time.Time, error) {
		marker := fmt.Sprintf("e2ebench-%d-%d", time.Now().UnixNano(), i)
		obj, err := ri.Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return time.Time{}, err
		}
		setMarker(obj, field, marker)
		for len(w.hits) > 0 { // stale hits of the previous edit
			<-w.hits
		}
		w.marker.Store(&marker)
		t0 := time.Now()
		_, err = ri.Update(ctx, obj, metav1.UpdateOptions{})
		return t0, err
	}

	// Warm-up edit, not measured: it adds the marker field, which can also
	// change outputs where the policy was Overridden before (a new field that
	// no other policy sets survives a patch merge). The outputs it reaches,
	// collected until the watch is quiet for 5 s, are the expected set of the
	// measured edits, which only change the field's value.
	if _, err := edit(-1); err != nil {
		return res, err
	}
	expected := collectHits(w, timeout)
	res.Expected = len(expected)
	for k := range p.Keys {
		if !expected[k] {
			res.ListedNotReached++
		}
	}
	if len(expected) == 0 {
		return res, fmt.Errorf("the warm-up edit of %s reached no output", p.ID)
	}

	var firsts, updates []float64
	for i := 0; i < reps; i++ {
		t0, err := edit(i)
		if err != nil {
			return res, err
		}
		updates = append(updates, msSince(t0, time.Now()))
		seen, first, last, extra := awaitHits(w, expected, timeout)
		res.Extra += extra
		if seen == len(expected) {
			res.Complete++
			res.LastMs = append(res.LastMs, msSince(t0, last))
			firsts = append(firsts, msSince(t0, first))
		} else {
			res.Missing += len(expected) - seen
			measure.Logf("  edit %d: %d of %d expected events after %s", i, seen, len(expected), timeout)
		}
		// Let stragglers arrive before the next edit starts.
		time.Sleep(300 * time.Millisecond)
	}
	empty := ""
	w.marker.Store(&empty)
	summarize(&res, firsts, updates)
	return res, nil
}

// summarize sets the percentiles of res: of its complete edits' last events,
// of their first events (firsts), and of every Update request (updates).
func summarize(res *report.EditResult, firsts, updates []float64) {
	if len(res.LastMs) > 0 {
		s := append([]float64(nil), res.LastMs...)
		sort.Float64s(s)
		res.P50Ms, res.P99Ms = measure.Pct(s, 0.5), measure.Pct(s, 0.99)
		sort.Float64s(firsts)
		res.FirstP50 = measure.Pct(firsts, 0.5)
	}
	sort.Float64s(updates)
	res.UpdateP50 = measure.Pct(updates, 0.5)
}

// collectHits gathers the outputs an edit reaches until the watch is quiet for 5 s (or
// timeout passes).
func collectHits(w *Watcher, timeout time.Duration) map[string]bool {
	expected := map[string]bool{}
	quiet := time.NewTimer(5 * time.Second)
	deadline := time.After(timeout)
	for {
		select {
		case h := <-w.hits:
			expected[h.key] = true
			quiet.Reset(5 * time.Second)
		case <-quiet.C:
			return expected
		case <-deadline:
			return expected
		}
	}
}

// awaitHits waits until every expected output has had an event of the current edit, or
// timeout: how many did, when the first event of any output and the last expected one came,
// and how many events came for outputs not expected.
func awaitHits(w *Watcher, expected map[string]bool, timeout time.Duration) (seen int, first, last time.Time, extra int) {
	got := map[string]bool{}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for len(got) < len(expected) {
		select {
		case h := <-w.hits:
			if first.IsZero() {
				first = h.at
			}
			if !expected[h.key] {
				extra++
				continue
			}
			if !got[h.key] {
				got[h.key] = true
				last = h.at
			}
		case <-timer.C:
			return len(got), first, last, extra
		}
	}
	return len(got), first, last, extra
}

func msSince(t0, t time.Time) float64 { return float64(t.Sub(t0).Microseconds()) / 1000 }

// setMarker writes a field no other policy sets into every stanza of the
// policy (defaults and overrides, or the implicit top level), so that every
// output in which the policy's values survive changes.
func setMarker(obj *unstructured.Unstructured, field, marker string) {
	spec, _ := obj.Object["spec"].(map[string]interface{})
	if spec == nil {
		spec = map[string]interface{}{}
		obj.Object["spec"] = spec
	}
	stanza := false
	for _, s := range []string{"defaults", "overrides"} {
		if m, ok := spec[s].(map[string]interface{}); ok {
			m[field] = marker
			stanza = true
		}
	}
	if !stanza {
		spec[field] = marker
	}
}

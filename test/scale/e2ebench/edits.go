package main

// Policy edits timed to their last watch event: the watcher that sees every
// EffectivePolicy event through kube-apiserver, the edits and what they reach.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale"
)

// policyReach is one policy and the outputs that name it as a source whose
// values survive (Enforced or PartiallyEnforced): the outputs an edit of its
// spec must change.
type policyReach struct {
	id       string // Kind namespace/name
	kind     string
	ns, name string
	attached string // Kind/name[/section] of one attachment point
	gateway  bool   // attached to a whole Gateway
	keys     map[string]bool
	named    int // outputs naming it as a source, any outcome
	namedSet map[string]bool
}

type outputIndex struct {
	rv       string
	names    []string // namespace/name of every EffectivePolicy
	policies map[string]*policyReach
}

func indexOutputs(body []byte) (*outputIndex, error) {
	var l struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []struct {
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
			Targets []struct {
				Policies []struct {
					Kind    string `json:"kind"`
					Sources []struct {
						Namespace  string `json:"namespace"`
						Name       string `json:"name"`
						Outcome    string `json:"outcome"`
						AttachedTo struct {
							Kind        string `json:"kind"`
							Name        string `json:"name"`
							SectionName string `json:"sectionName"`
						} `json:"attachedTo"`
					} `json:"sources"`
				} `json:"policies"`
			} `json:"targets"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, err
	}
	idx := &outputIndex{rv: l.Metadata.ResourceVersion, policies: map[string]*policyReach{}}
	for _, it := range l.Items {
		key := it.Metadata.Namespace + "/" + it.Metadata.Name
		idx.names = append(idx.names, key)
		for _, t := range it.Targets {
			for _, p := range t.Policies {
				for _, s := range p.Sources {
					id := p.Kind + " " + s.Namespace + "/" + s.Name
					pr := idx.policies[id]
					if pr == nil {
						a := s.AttachedTo.Kind + "/" + s.AttachedTo.Name
						if s.AttachedTo.SectionName != "" {
							a += "/" + s.AttachedTo.SectionName
						}
						pr = &policyReach{id: id, kind: p.Kind, ns: s.Namespace, name: s.Name, attached: a,
							gateway: s.AttachedTo.Kind == "Gateway" && s.AttachedTo.SectionName == "",
							keys:    map[string]bool{}, namedSet: map[string]bool{}}
						idx.policies[id] = pr
					}
					pr.namedSet[key] = true
					if s.Outcome == "Enforced" || s.Outcome == "PartiallyEnforced" {
						pr.keys[key] = true
					}
				}
			}
		}
	}
	for _, pr := range idx.policies {
		pr.named, pr.namedSet = len(pr.namedSet), nil
	}
	sort.Strings(idx.names)
	return idx, nil
}

// pickPolicies: the Gateway-level policy of median reach, and the policy
// (any level) of the smallest reach of at least 200 outputs. Ties by id, so the
// choice is reproducible for a given topology.
func (idx *outputIndex) pickPolicies() (gw, near *policyReach) {
	var all, gws []*policyReach
	for _, p := range idx.policies {
		all = append(all, p)
		if p.gateway {
			gws = append(gws, p)
		}
	}
	byReach := func(s []*policyReach) {
		sort.Slice(s, func(i, j int) bool {
			if len(s[i].keys) != len(s[j].keys) {
				return len(s[i].keys) < len(s[j].keys)
			}
			return s[i].id < s[j].id
		})
	}
	byReach(gws)
	if len(gws) > 0 {
		gw = gws[len(gws)/2]
	}
	// The smallest reach of at least 200 (so the target is not met by a
	// smaller edit); the largest when none reaches 200.
	byReach(all)
	for _, p := range all {
		if len(p.keys) >= 200 {
			return gw, p
		}
	}
	if len(all) > 0 {
		near = all[len(all)-1]
	}
	return gw, near
}

// watcher keeps one watch on every EffectivePolicy open (reopening it from
// the last resourceVersion if the server closes it) and reports the outputs
// whose JSON contains the current edit's marker.
type watcher struct {
	marker atomic.Pointer[string]
	hits   chan hit
	cancel context.CancelFunc
	done   chan struct{}
}

type hit struct {
	key string
	at  time.Time
}

// watchEvent is the part of a watch event the watcher reads.
type watchEvent struct {
	Type   string `json:"type"`
	Object struct {
		Metadata struct {
			Name            string `json:"name"`
			Namespace       string `json:"namespace"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	} `json:"object"`
}

// newWatcher watches every EffectivePolicy from rv, reading the raw stream:
// an event has arrived when its line has been read, and it carries the
// marker when its bytes contain it. What a client does with an event after it
// arrives (decode it into a typed object, ~0.2 ms for 13 KB; into
// unstructured maps, several times that) is the client's cost, not the
// server's delivery; decoding every event into unstructured maps first, as
// the dynamic client does, had made the last of 413 events wait ~0.3 s
// behind the client's own work on these 2 cores.
func newWatcher(ctx context.Context, rc rest.Interface, rv string) (*watcher, error) {
	ctx, cancel := context.WithCancel(ctx)
	w := &watcher{hits: make(chan hit, 100000), cancel: cancel, done: make(chan struct{})}
	empty := ""
	w.marker.Store(&empty)
	open := func(rv string) (io.ReadCloser, error) {
		return rc.Get().AbsPath(epPath).Param("watch", "true").Param("resourceVersion", rv).
			Param("allowWatchBookmarks", "true").SetHeader("Accept", "application/json").Stream(ctx)
	}
	body, err := open(rv)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("watch effectivepolicies from %s: %w", rv, err)
	}
	go func() {
		defer close(w.done)
		for {
			br := bufio.NewReaderSize(body, 1<<20)
			for {
				line, err := br.ReadBytes('\n')
				if err != nil {
					break
				}
				now := time.Now()
				var ev watchEvent
				if json.Unmarshal(line, &ev) != nil {
					continue
				}
				if ev.Object.Metadata.ResourceVersion != "" {
					rv = ev.Object.Metadata.ResourceVersion
				}
				m := *w.marker.Load()
				if m == "" || (ev.Type != string(watch.Modified) && ev.Type != string(watch.Added)) {
					continue
				}
				if bytes.Contains(line, []byte(m)) {
					w.hits <- hit{key: ev.Object.Metadata.Namespace + "/" + ev.Object.Metadata.Name, at: now}
				}
			}
			_ = body.Close()
			if ctx.Err() != nil {
				return
			}
			for {
				body, err = open(rv)
				if err == nil {
					break
				}
				if ctx.Err() != nil {
					return
				}
				logf("re-opening the watch from %s: %v", rv, err)
				time.Sleep(time.Second)
			}
		}
	}()
	return w, nil
}

func (w *watcher) stop() { w.cancel(); <-w.done }

func runEdits(ctx context.Context, dc dynamic.Interface, w *watcher, name, field string, p *policyReach, reps int, timeout time.Duration) (editResult, error) {
	res := editResult{Name: name, Policy: p.id, Attached: p.attached, ListedReach: len(p.keys), NamedBy: p.named, Reps: reps}
	var plural string
	for _, k := range scale.PolicyKinds {
		if k.Kind == p.kind {
			plural = k.Plural
		}
	}
	if plural == "" {
		return res, fmt.Errorf("unknown policy kind %s", p.kind)
	}
	ri := dc.Resource(schema.GroupVersionResource{Group: scale.PolicyGroup, Version: "v1", Resource: plural}).Namespace(p.ns)
	edit := func(i int) (time.Time, error) {
		marker := fmt.Sprintf("e2ebench-%d-%d", time.Now().UnixNano(), i)
		obj, err := ri.Get(ctx, p.name, metav1.GetOptions{})
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
	for k := range p.keys {
		if !expected[k] {
			res.ListedNotReached++
		}
	}
	if len(expected) == 0 {
		return res, fmt.Errorf("the warm-up edit of %s reached no output", p.id)
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
			logf("  edit %d: %d of %d expected events after %s", i, seen, len(expected), timeout)
		}
		// Let stragglers arrive before the next edit starts.
		time.Sleep(300 * time.Millisecond)
	}
	empty := ""
	w.marker.Store(&empty)
	if len(res.LastMs) > 0 {
		s := append([]float64(nil), res.LastMs...)
		sort.Float64s(s)
		res.P50Ms, res.P99Ms = pct(s, 0.5), pct(s, 0.99)
		sort.Float64s(firsts)
		res.FirstP50 = pct(firsts, 0.5)
	}
	sort.Float64s(updates)
	res.UpdateP50 = pct(updates, 0.5)
	return res, nil
}

// collectHits gathers the outputs an edit reaches until the watch is quiet for 5 s (or
// timeout passes).
func collectHits(w *watcher, timeout time.Duration) map[string]bool {
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
func awaitHits(w *watcher, expected map[string]bool, timeout time.Duration) (seen int, first, last time.Time, extra int) {
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

//go:build e2e && long

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	epclient "github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned/typed/effectivepolicy/v1alpha1"
)

// The load test's watchers: each one's state from its initial list and its events, checked as
// it goes and compared with a LIST at the end.

// loadEntry is one object as a watcher or a LIST has it: its resourceVersion and its content
// (targets, as generic JSON, so that equal content compares equal whatever the key order).
type loadEntry struct {
	rv      uint64
	content any
}

func contentOf(targets []v1alpha1.Target) (any, error) {
	b, err := json.Marshal(targets)
	if err != nil {
		return nil, err
	}
	var v any
	err = json.Unmarshal(b, &v)
	return v, err
}

func entryOf(o *v1alpha1.EffectivePolicy) (loadEntry, error) {
	rv, err := strconv.ParseUint(o.ResourceVersion, 10, 64)
	if err != nil {
		return loadEntry{}, fmt.Errorf("%s/%s: resourceVersion %q: %v", o.Namespace, o.Name, o.ResourceVersion, err)
	}
	c, err := contentOf(o.Targets)
	return loadEntry{rv: rv, content: c}, err
}

// loadWatcher holds one watch's view of the EffectivePolicies of its scope ("" = all namespaces).
type loadWatcher struct {
	id        int
	namespace string

	mu       sync.Mutex
	state    map[string]loadEntry // "namespace/name" → entry
	objRV    map[string]uint64    // last resourceVersion seen per key, deleted keys included
	lastRV   uint64
	events   int
	problems []string
}

func (w *loadWatcher) problem(format string, args ...any) {
	if len(w.problems) < 20 {
		w.problems = append(w.problems, fmt.Sprintf(format, args...))
	}
}

// run lists, reports on started, then applies watch events until ctx ends. A watch that ends
// before that is a problem: the server or the kube-apiserver dropped it under load.
func (w *loadWatcher) run(ctx context.Context, ep epclient.EffectivepolicyV1alpha1Interface, started chan<- error) {
	c := ep.EffectivePolicies(w.namespace)
	list, err := c.List(ctx, metav1.ListOptions{})
	if err != nil {
		started <- fmt.Errorf("watcher %d: list: %w", w.id, err)
		return
	}
	w.mu.Lock()
	w.lastRV, err = strconv.ParseUint(list.ResourceVersion, 10, 64)
	if err != nil {
		w.mu.Unlock()
		started <- fmt.Errorf("watcher %d: list resourceVersion %q: %v", w.id, list.ResourceVersion, err)
		return
	}
	for i := range list.Items {
		e, err := entryOf(&list.Items[i])
		if err != nil {
			w.mu.Unlock()
			started <- err
			return
		}
		k := list.Items[i].Namespace + "/" + list.Items[i].Name
		w.state[k] = e
		w.objRV[k] = e.rv
	}
	w.mu.Unlock()
	timeout := int64(1800) // longer than any run: the watch must not end on its own
	wi, err := c.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, TimeoutSeconds: &timeout})
	if err != nil {
		started <- fmt.Errorf("watcher %d: watch: %w", w.id, err)
		return
	}
	defer wi.Stop()
	started <- nil
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-wi.ResultChan():
			if !ok {
				if ctx.Err() == nil {
					w.mu.Lock()
					w.problem("watch ended before the test did")
					w.mu.Unlock()
				}
				return
			}
			w.apply(ev)
		}
	}
}

// apply checks one event against the watcher's state and applies it. Every change gets its own
// resourceVersion, also inside one recompute batch (docs/storage.md), so they strictly increase
// across the watch and per object.
func (w *loadWatcher) apply(ev watch.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events++
	o, ok := ev.Object.(*v1alpha1.EffectivePolicy)
	if !ok {
		w.problem("%s event with %T: %v", ev.Type, ev.Object, ev.Object)
		return
	}
	k := o.Namespace + "/" + o.Name
	if w.namespace != "" && o.Namespace != w.namespace {
		w.problem("%s event for %s outside the watched namespace", ev.Type, k)
	}
	e, err := entryOf(o)
	if err != nil {
		w.problem("%s event: %v", ev.Type, err)
		return
	}
	if e.rv <= w.lastRV {
		w.problem("%s %s at resourceVersion %d after %d: resourceVersions did not increase", ev.Type, k, e.rv, w.lastRV)
	}
	w.lastRV = max(w.lastRV, e.rv)
	if prev, seen := w.objRV[k]; seen && e.rv <= prev {
		w.problem("%s %s at resourceVersion %d, already at %d: duplicated or reordered", ev.Type, k, e.rv, prev)
	}
	w.objRV[k] = e.rv
	_, exists := w.state[k]
	switch ev.Type {
	case watch.Added:
		if exists {
			w.problem("ADDED %s (resourceVersion %d) that the watcher already has", k, e.rv)
		}
		w.state[k] = e
	case watch.Modified:
		if !exists {
			w.problem("MODIFIED %s (resourceVersion %d) that the watcher does not have: ADDED missed", k, e.rv)
		}
		w.state[k] = e
	case watch.Deleted:
		if !exists {
			w.problem("DELETED %s (resourceVersion %d) that the watcher does not have", k, e.rv)
		}
		delete(w.state, k)
	default:
		w.problem("unexpected %s event: %v", ev.Type, ev.Object)
	}
}

func (w *loadWatcher) compare(want map[string]loadEntry) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var diffs []string
	for k, e := range want {
		got, ok := w.state[k]
		switch {
		case !ok:
			diffs = append(diffs, k+": missing")
		case got.rv != e.rv:
			diffs = append(diffs, fmt.Sprintf("%s: resourceVersion %d, LIST has %d", k, got.rv, e.rv))
		case !reflect.DeepEqual(got.content, e.content):
			diffs = append(diffs, k+": content differs from the LIST")
		}
	}
	for k := range w.state {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, k+": not in the LIST")
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		return fmt.Errorf("%d differences: %s", len(diffs), strings.Join(diffs, "; "))
	}
	return nil
}

package compute

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute/topology"
)

// TestWhatIf proposes each mutation of the incremental world on its own and
// checks that the review (a) leaves the engine exactly as it was, (b) says
// for every key it returns what a full recomputation with the change gives,
// and what the engine gives now, and (c) returns every key whose output the
// change would alter.
func TestWhatIf(t *testing.T) {
	e, base, before, muts := incrementalWorld(t)
	crdGK := schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
	render := func(o runtime.Object) string {
		if o == nil {
			return ""
		}
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	reviewed := 0
	for _, m := range muts {
		p := Proposal{Apply: m.upsert}
		cur := map[objKey]*unstructured.Unstructured{}
		for k, o := range base {
			cur[k] = o
		}
		skip := false
		for _, o := range m.upsert {
			skip = skip || isCRD(o)
			cur[keyOfObj(o)] = o
		}
		for _, d := range m.del {
			skip = skip || d.gk == crdGK
			p.Delete = append(p.Delete, ObjectKey{Group: d.gk.Group, Kind: d.gk.Kind, Namespace: d.ns, Name: d.name})
			delete(cur, d)
		}
		if skip {
			if _, err := e.WhatIf(p); !errors.Is(err, ErrNotReviewable) {
				t.Errorf("%s: a CRD proposal: %v", m.name, err)
			}
			continue
		}
		reviewed++
		// A new object is the newest of all; the reference gets the time the review gave it.
		outs, err := e.WhatIf(p)
		if errors.Is(err, ErrNotReviewable) && proposesUnknownKind(e, m) {
			reviewed-- // a kind an earlier mutation's CRD brings: refused, rightly
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		if now := snapshot(t, e); !reflect.DeepEqual(now, before) {
			for k := range unionKeys(now, before) {
				if now[k] != before[k] {
					t.Errorf("%s: the review left %v changed:\n got %s\nwant %s", m.name, k, now[k], before[k])
				}
			}
			t.FailNow()
		}
		want := snapshotAll(t, stampedLike(cur, base))
		returned := map[Key]bool{}
		for _, o := range outs {
			returned[o.Key] = true
			if got := render(o.Before); got != before[o.Key] {
				t.Errorf("%s: %v before:\n got %s\nwant %s", m.name, o.Key, got, before[o.Key])
			}
			if got := render(o.After); got != want[o.Key] {
				t.Errorf("%s: %v after:\n got %s\nwant %s", m.name, o.Key, got, want[o.Key])
			}
		}
		for k := range unionKeys(before, want) {
			if before[k] != want[k] && !returned[k] {
				t.Errorf("%s: %v would change but was not returned", m.name, k)
			}
		}
	}
	if reviewed < 10 {
		t.Fatalf("only %d mutations reviewed", reviewed)
	}
}

// proposesUnknownKind reports whether m applies an object of a kind e does
// not know.
func proposesUnknownKind(e *Engine, m mutation) bool {
	for _, o := range m.upsert {
		if _, known := e.st.scope(o.GroupVersionKind().GroupKind()); !known {
			return true
		}
	}
	return false
}

// stampedLike gives the objects of cur that exist in base base's
// creationTimestamp (a proposal keeps it, as an apply does), and the new
// ones one timestamp later than any (a review makes them the newest).
func stampedLike(cur, base map[objKey]*unstructured.Unstructured) map[objKey]*unstructured.Unstructured {
	newest := metav1.NewTime(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC))
	out := make(map[objKey]*unstructured.Unstructured, len(cur))
	for k, o := range cur {
		b := base[k]
		switch {
		case b == nil:
			o = o.DeepCopy()
			o.SetCreationTimestamp(newest)
		case b != o:
			o = o.DeepCopy()
			o.SetCreationTimestamp(b.GetCreationTimestamp())
		}
		out[k] = o
	}
	return out
}

// TestWhatIfRefuses: what a review cannot take says so, and changes nothing.
func TestWhatIfRefuses(t *testing.T) {
	e := engineWith(t, baseTopology, "")
	before := snapshot(t, e)
	obj := func(apiVersion, kind, ns, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": apiVersion, "kind": kind}}
		u.SetNamespace(ns)
		u.SetName(name)
		return u
	}
	cases := []struct {
		name string
		p    Proposal
	}{
		{"unknown kind", Proposal{Apply: []*unstructured.Unstructured{obj("apps/v1", "Deployment", "appns", "d")}}},
		{"namespaced without namespace", Proposal{Apply: []*unstructured.Unstructured{obj("example.com/v1", "RetryPolicy", "", "p")}}},
		{"cluster-scoped with namespace", Proposal{Delete: []ObjectKey{{Group: topology.GatewayGroup, Kind: "GatewayClass", Namespace: "appns", Name: "gc"}}}},
		{"a CRD", Proposal{Apply: []*unstructured.Unstructured{obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "x.example.com")}}},
	}
	for _, tc := range cases {
		if _, err := e.WhatIf(tc.p); !errors.Is(err, ErrNotReviewable) {
			t.Errorf("%s: want ErrNotReviewable, got %v", tc.name, err)
		}
	}
	if after := snapshot(t, e); !reflect.DeepEqual(before, after) {
		t.Error("a refused review changed the engine")
	}
}

// TestWhatIfWithin: a review that runs out of time says how much it
// reaches and leaves the engine as it was.
func TestWhatIfWithin(t *testing.T) {
	e, _, before, muts := incrementalWorld(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := e.WhatIfWithin(ctx, Proposal{Apply: muts[0].upsert})
	if !errors.Is(err, ErrReviewTooLarge) || !strings.Contains(err.Error(), "outputs") {
		t.Fatalf("want ErrReviewTooLarge naming the outputs, got %v", err)
	}
	if now := snapshot(t, e); !reflect.DeepEqual(now, before) {
		t.Fatal("a review out of time left the engine changed")
	}
}

// TestWhatIfUndecodableSpec: a stored spec that does not decode (an engine
// bug, simulated here) makes the review fail with the reason, after
// putting back what the proposal had already changed.
func TestWhatIfUndecodableSpec(t *testing.T) {
	e := engineWith(t, baseTopology, "")
	var topo []topology.NodeID
	for n := range e.st.specs {
		if n.Kind == "HTTPRoute" || n.Kind == "Gateway" {
			topo = append(topo, n)
		}
	}
	if len(topo) < 2 {
		t.Fatalf("want two routes or Gateways in the topology, have %v", topo)
	}
	sort.Slice(topo, func(i, j int) bool { return topology.LessNode(topo[i], topo[j]) })
	first, broken := topo[0], topo[1]
	e.st.specs[broken] = storedSpec{enc: []byte{'m', 9}}
	before := snapshot(t, e)
	del := func(n topology.NodeID) ObjectKey {
		return ObjectKey{Group: n.Group, Kind: n.Kind, Namespace: n.Namespace, Name: n.Name}
	}
	_, err := e.WhatIf(Proposal{Delete: []ObjectKey{del(first), del(broken)}})
	if !errors.Is(err, errSpecEncoding) || !strings.Contains(err.Error(), broken.Name) {
		t.Fatalf("want the stored spec's error naming %s, got %v", broken.Name, err)
	}
	if now := snapshot(t, e); !reflect.DeepEqual(now, before) {
		t.Fatal("a failed review left the engine changed")
	}
	if _, ok := e.st.specs[first]; !ok {
		t.Fatalf("%v was not put back", first)
	}
}

package ui

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/render"
)

// TestGraphCache: a graph is drawn once per version and focus (the same
// entry whoever asks, at once or later), again for another version or
// focus; a focus that cannot be drawn is the same error each time; the
// cache is emptied when it holds graphCacheMax graphs.
func TestGraphCache(t *testing.T) {
	objs := demoObjects(t)
	cases := []struct {
		name string
		// first and second are asked in turn: version and focus.
		firstVersion, secondVersion uint64
		firstFocus, secondFocus     string
		fill                        bool
		wantSame, wantErr           bool
	}{
		{name: "same version and focus", firstVersion: 3, secondVersion: 3, wantSame: true},
		{name: "another version", firstVersion: 3, secondVersion: 4},
		{name: "another focus", firstVersion: 3, secondVersion: 3, secondFocus: "gateway.networking.k8s.io/Gateway/infra/nowhere", wantErr: true},
		{name: "a focus that cannot be drawn, twice", firstVersion: 3, secondVersion: 3,
			firstFocus: "gateway.networking.k8s.io/Gateway/infra/nowhere", secondFocus: "gateway.networking.k8s.io/Gateway/infra/nowhere", wantSame: true, wantErr: true},
		{name: "full", firstVersion: 3, secondVersion: 3, fill: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c graphCache
			first, err := c.get(objs, tc.firstVersion, tc.firstFocus)
			if (err != nil) != (tc.firstFocus != "") {
				t.Fatalf("first: %v", err)
			}
			if tc.fill {
				for i := range graphCacheMax {
					_, _ = c.get(objs, tc.firstVersion, fmt.Sprintf("no/such/gateway/%d", i))
				}
			}
			second, err := c.get(objs, tc.secondVersion, tc.secondFocus)
			if (err != nil) != tc.wantErr {
				t.Fatalf("second: %v, want an error: %v", err, tc.wantErr)
			}
			if (first == second) != tc.wantSame {
				t.Errorf("the same entry: %v, want %v", first == second, tc.wantSame)
			}
			if err == nil && (len(second.body) == 0 || second.tag != graphTag(second.body)) {
				t.Errorf("entry: %d bytes, tag %q", len(second.body), second.tag)
			}
		})
	}
}

// TestGraphCacheAtOnce: asked at once, the graph is drawn once and every
// caller gets it.
func TestGraphCacheAtOnce(t *testing.T) {
	objs := demoObjects(t)
	var c graphCache
	got := make([]*cachedGraph, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g, err := c.get(objs, 1, "")
			if err != nil {
				t.Error(err)
			}
			got[i] = g
		}()
	}
	wg.Wait()
	for i, g := range got {
		if g != got[0] {
			t.Errorf("caller %d got another entry", i)
		}
	}
}

// demoObjects are the demo's EffectivePolicies.
func demoObjects(t *testing.T) []runtime.Object {
	t.Helper()
	l, err := newDemoSource(t).EffectivePolicies(context.Background(), "", false)
	if err != nil {
		t.Fatal(err)
	}
	return render.Items(l)
}

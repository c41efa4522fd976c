package scale

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/live"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/reach"
)

// TestLiveReachesFollowEdits: the live layer with the real engine on a small generated
// topology, through 60 random edits (a policy relabeled, retargeted or deleted, a route or
// Service deleted, a deleted object created again): after every ten, once it has caught up,
// every PolicyReach lists exactly the entries the served outputs give its policy, and there is
// one PolicyReach per policy (docs/spec.md §8). The incremental path of the reach index (compare,
// intern, release) against what a full rebuild would say.
func TestLiveReachesFollowEdits(t *testing.T) {
	objs := Generate(Options{Scale: 0.01, Seed: 3, GatewayAPICRDs: true})
	client := fakeClient(t, objs)
	s := startLive(t, client, t.TempDir())
	defer s.stop()

	current := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		current[objKey(o)] = o.DeepCopy()
	}
	e := &randomEditor{t: t, ctx: context.Background(), client: client, rng: rand.New(rand.NewPCG(3, 5)), current: current}
	for step := 1; step <= 60; step++ {
		e.edit(step)
		if step%10 != 0 {
			continue
		}
		// Wait until the live layer has caught up: the informers deliver the
		// edits and the worker recomputes every output and reach they touch.
		// The bound only ends a wait that would never end (a reach that
		// stays wrong); catching up took 35 s under the race detector on a
		// machine kept busy by four other test runs, where a 20 s bound
		// failed. Each poll lists and decodes every output, so polls are
		// spaced to leave the worker the cores.
		var d []string
		for deadline := time.Now().Add(reachCatchUpBound); ; time.Sleep(200 * time.Millisecond) {
			if d = reachDiff(t, s.l, e.current); len(d) == 0 || time.Now().After(deadline) {
				break
			}
		}
		if len(d) > 0 {
			t.Fatalf("after %d edits, reaches != outputs:\n%s", step, strings.Join(d, "\n"))
		}
	}
}

// reachCatchUpBound bounds the wait for the live layer to catch up with a
// round of edits.
const reachCatchUpBound = 3 * time.Minute

// randomEditor edits the objects of a fake cluster at random, keeping
// current (kind ns/name -> object) and the objects it removed.
type randomEditor struct {
	t       *testing.T
	ctx     context.Context
	client  dynamic.Interface
	rng     *rand.Rand
	current map[string]*unstructured.Unstructured
	removed []*unstructured.Unstructured
}

// edit makes the edit of one step: a policy relabeled, retargeted or
// deleted, a route or Service deleted, or a deleted object created again.
func (e *randomEditor) edit(step int) {
	switch op := e.rng.IntN(6); {
	case op == 0:
		if p := e.pick("policy"); p != nil {
			p.SetLabels(map[string]string{"step": fmt.Sprint(step)})
			e.update(p)
		}
	case op == 1:
		if p := e.pick("policy"); p != nil {
			// Retarget to the GatewayClass: it reaches everything under it.
			_ = unstructured.SetNestedSlice(p.Object, []interface{}{map[string]interface{}{
				"group": "gateway.networking.k8s.io", "kind": "GatewayClass", "name": "bench"}}, "spec", "targetRefs")
			e.update(p)
		}
	case op == 2:
		if p := e.pick("policy"); p != nil {
			e.remove(p)
		}
	case op == 3:
		if r := e.pick("HTTPRoute"); r != nil {
			e.remove(r)
		}
	case op == 4:
		if svc := e.pick("Service"); svc != nil {
			e.remove(svc)
		}
	case op == 5 && len(e.removed) > 0:
		i := e.rng.IntN(len(e.removed))
		o := e.removed[i]
		e.removed = append(e.removed[:i], e.removed[i+1:]...)
		if _, err := e.res(o).Create(e.ctx, o, metav1.CreateOptions{}); err != nil {
			e.t.Fatal(err)
		}
		e.current[objKey(o)] = o
	}
}

// pick returns a current object of kind ("policy": of any policy kind)
// chosen at random, or nil if there is none.
func (e *randomEditor) pick(kind string) *unstructured.Unstructured {
	var keys []string
	for k, o := range e.current {
		if o.GetKind() == kind || kind == "policy" && o.GroupVersionKind().Group == PolicyGroup {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	sort.Strings(keys)
	return e.current[keys[e.rng.IntN(len(keys))]]
}

func (e *randomEditor) res(o *unstructured.Unstructured) dynamic.ResourceInterface {
	return e.client.Resource(Resource(o)).Namespace(o.GetNamespace())
}

func (e *randomEditor) remove(o *unstructured.Unstructured) {
	if err := e.res(o).Delete(e.ctx, o.GetName(), metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
	delete(e.current, objKey(o))
	e.removed = append(e.removed, o)
}

func (e *randomEditor) update(o *unstructured.Unstructured) {
	if _, err := e.res(o).Update(e.ctx, o, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func objKey(o *unstructured.Unstructured) string {
	return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
}

// reachDiff compares the served reaches with the served outputs' source entries, and the
// reaches' names with the policies in current.
func reachDiff(t *testing.T, l *live.Live, current map[string]*unstructured.Unstructured) []string {
	t.Helper()
	ctx := context.Background()
	count := func(m map[string]int, policy, group, kind string, r v1alpha1.Reach) {
		m[fmt.Sprintf("%s %s/%s %+v", policy, group, kind, r)]++
	}
	want, got := map[string]int{}, map[string]int{}
	for _, b := range []*live.Backend{l.EffectivePolicies(), l.ClusterEffectivePolicies()} {
		objs, _, err := b.List(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			dec, err := o.Decode()
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range reach.FromOutput(dec) {
				count(want, e.Policy.String(), e.Group, e.Kind, e.Reach)
			}
		}
	}
	names := map[string]bool{}
	for _, b := range []*live.Backend{l.PolicyReaches(), l.ClusterPolicyReaches()} {
		objs, _, err := b.List(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			key := o.Namespace + "/" + o.Name
			names[key] = true
			ps, err := o.Policies()
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ps {
				for _, r := range p.Reaches {
					count(got, key, p.Group, p.Kind, r)
				}
			}
		}
	}
	var d []string
	for k, n := range want {
		if got[k] != n {
			d = append(d, fmt.Sprintf("outputs %d× reaches %d×: %s", n, got[k], k))
		}
	}
	for k, n := range got {
		if _, ok := want[k]; !ok {
			d = append(d, fmt.Sprintf("only in reaches (%d×): %s", n, k))
		}
	}
	for _, o := range current {
		if o.GroupVersionKind().Group == PolicyGroup && !names[o.GetNamespace()+"/"+o.GetName()] {
			d = append(d, "no reach for "+objKey(o))
		}
		delete(names, o.GetNamespace()+"/"+o.GetName())
	}
	for k := range names {
		d = append(d, "a reach for no policy: "+k)
	}
	sort.Strings(d)
	return d
}

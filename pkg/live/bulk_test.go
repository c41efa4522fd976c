package live

import (
	"context"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// bulkFakeEngine adds compute.Engine's bulk mode to fakeEngine: while on,
// Upsert and Delete return no keys. onSwitch runs inside SetBulk(false),
// before or after the mode changes, to inject an event at the switch.
type bulkFakeEngine struct {
	*fakeEngine
	mu   sync.Mutex
	bulk bool
	// memoDrops counts DropMemo calls.
	memoDrops int
	switches  []bool
	// keyed counts the policy upserts made out of bulk mode.
	keyed    int
	before   func()
	after    func()
	switched bool
}

// DropMemo counts the live layer's calls (after its first full computation).
func (e *bulkFakeEngine) DropMemo() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.memoDrops++
}

func (e *bulkFakeEngine) SetBulk(on bool) {
	e.mu.Lock()
	first := !on && !e.switched
	if first {
		e.switched = true
	}
	e.switches = append(e.switches, on)
	e.mu.Unlock()
	if first && e.before != nil {
		e.before()
	}
	e.mu.Lock()
	e.bulk = on
	e.mu.Unlock()
	if first && e.after != nil {
		e.after()
	}
}

func (e *bulkFakeEngine) Upsert(obj *unstructured.Unstructured) []compute.Key {
	keys := e.fakeEngine.Upsert(obj)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.bulk {
		return nil
	}
	if obj.GetKind() == "RetryPolicy" {
		e.keyed++
	}
	return keys
}

func (e *bulkFakeEngine) Delete(gk schema.GroupKind, namespace, name string) []compute.Key {
	keys := e.fakeEngine.Delete(gk, namespace, name)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.bulk {
		return nil
	}
	return keys
}

// TestStartUpFeedsInBulk: the informers' initial lists reach the engine in
// bulk mode (no affected keys), which is switched off once they synced, and
// the first full computation still serves every output, including an event
// that arrives just before or just after the switch.
func TestStartUpFeedsInBulk(t *testing.T) {
	for _, tc := range []struct {
		name         string
		beforeSwitch bool
	}{
		{"event just before the switch", true},
		{"event just after the switch", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := []runtime.Object{
				crd("example.com", "RetryPolicy", "retrypolicies", true),
				policy("default", "p1", "r", "1"),
				policy("other", "p2", "s", "2"),
			}
			client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds(), objs...)
			e := &bulkFakeEngine{fakeEngine: newFakeEngine()}
			o := NewOptions()
			o.CacheDir = t.TempDir()
			o.RecomputeDebounce = time.Minute // the full computation and List's flush apply changes, not the worker
			l, err := NewWithEngine(o, e, client)
			if err != nil {
				t.Fatal(err)
			}
			inject := func() { sink{engine: l.engine, queue: l.queue}.Upsert(policy("default", "late", "r", "9")) }
			if tc.beforeSwitch {
				e.before = inject
			} else {
				e.after = inject
			}
			h := &harness{t: t, live: l}
			h.start()

			e.mu.Lock()
			switches, keyed, drops := append([]bool(nil), e.switches...), e.keyed, e.memoDrops
			e.mu.Unlock()
			if drops != 1 {
				t.Errorf("DropMemo called %d times by the time the server is ready, want once after the full computation", drops)
			}
			if len(switches) != 2 || !switches[0] || switches[1] {
				t.Fatalf("SetBulk calls %v, want [true false]", switches)
			}
			wantKeyed := 0
			if !tc.beforeSwitch {
				wantKeyed = 1 // the injected event only
			}
			if keyed != wantKeyed {
				t.Errorf("%d policy upserts out of bulk mode, want %d", keyed, wantKeyed)
			}
			got := map[string]string{}
			objs2, _, err := l.EffectivePolicies().List(context.Background(), "")
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs2 {
				d := describe(watch.Event{Object: o})
				got[d.key] = d.msg
			}
			want := map[string]string{"default/r": "late=9;p1=1;", "other/s": "p2=2;"}
			if len(got) != len(want) || got["default/r"] != want["default/r"] || got["other/s"] != want["other/s"] {
				t.Errorf("served %v, want %v", got, want)
			}
		})
	}
}

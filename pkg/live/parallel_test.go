package live

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// panicEngine computes an output per key, panicking for keys named boom*
// once armed.
type panicEngine struct {
	*fakeEngine
	armed bool
	gen   string
}

func (e *panicEngine) Compute(k compute.Key) (runtime.Object, bool) {
	if e.armed && strings.HasPrefix(k.Name, "boom") {
		panic("engine bug on " + k.String())
	}
	o := &v1alpha1.EffectivePolicy{Targets: []v1alpha1.Target{{Kind: "HTTPRoute", Name: k.Name + "@" + e.gen}}}
	o.Name, o.Namespace = k.Name, k.Namespace
	return o, true
}

// TestParallelBatchRecoversPanicsPerKey: a batch computed on several
// goroutines applies every key that computed, in key order (one
// resourceVersion each, increasing with the key), and keeps the previous output of each key whose
// computation panicked.
func TestParallelBatchRecoversPanicsPerKey(t *testing.T) {
	e := &panicEngine{fakeEngine: newFakeEngine(), gen: "1"}
	o := NewOptions()
	o.CacheDir = t.TempDir()
	l, err := NewWithEngine(o, e, dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds()))
	if err != nil {
		t.Fatal(err)
	}
	var keys []compute.Key
	booms := 0
	for i := 0; i < 2*batchSize+7; i++ {
		name := fmt.Sprintf("r%04d", i)
		if i%97 == 0 {
			name = fmt.Sprintf("boom%04d", i)
			booms++
		}
		keys = append(keys, compute.Key{Namespace: "ns", Name: name})
	}
	compute.SortKeys(keys)
	l.outputs.apply(keys, map[compute.Key]struct{}{})

	e.armed, e.gen = true, "2"
	before := l.stores.namespaced.ResourceVersion()
	l.outputs.apply(keys, map[compute.Key]struct{}{})
	if got, want := l.stores.namespaced.ResourceVersion()-before, uint64(len(keys)-booms); got != want {
		t.Errorf("%d resourceVersions for %d changed outputs", got, want)
	}
	objs, _, _ := l.EffectivePolicies().List(context.Background(), "")
	if len(objs) != len(keys) {
		t.Fatalf("%d objects, want %d", len(objs), len(keys))
	}
	var last uint64
	for i, obj := range objs {
		p := obj
		want := "2"
		if strings.HasPrefix(p.Name, "boom") {
			want = "1" // the previous output stays
		} else {
			rv, err := strconv.ParseUint(p.ResourceVersion, 10, 64)
			if err != nil || rv <= last {
				t.Errorf("object %d: resourceVersion %s after %d: not applied in key order", i, p.ResourceVersion, last)
			}
			last = rv
		}
		targets, err := p.Targets()
		if err != nil {
			t.Fatal(err)
		}
		if p.Name != keys[i].Name || targets[0].Name != p.Name+"@"+want {
			t.Errorf("object %d: %s with target %s, want %s@%s", i, p.Name, targets[0].Name, keys[i].Name, want)
		}
	}
}

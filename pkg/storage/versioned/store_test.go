package versioned

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/resourceversion"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newStore(namespaced bool, history int) *testStore {
	now := t0
	return New[*v1alpha1.EffectivePolicy](Options{
		Namespaced:  namespaced,
		HistorySize: history,
		Resource:    v1alpha1.Resource("effectivepolicies"),
		Now:         func() time.Time { now = now.Add(time.Second); return now },
		Epoch:       testEpoch,
	})
}

// The stores of these tests hold typed objects.
type (
	testStore = Store[*v1alpha1.EffectivePolicy]
	change    = Change[*v1alpha1.EffectivePolicy]
)

// testEpoch is the epoch of the stores of newStore.
const testEpoch = 1

// at is the resourceVersion of counter n of testEpoch; ats the same as a string.
func at(n uint64) uint64  { return resourceversion.Make(testEpoch, n) }
func ats(n uint64) string { return resourceversion.Format(at(n)) }

// counter strips the epoch from a resourceVersion string.
func counter(rv string) string {
	n, err := resourceversion.Parse(rv)
	if err != nil {
		return rv
	}
	return resourceversion.Format(resourceversion.CounterOf(n))
}

func obj(ns, name, kind string) *v1alpha1.EffectivePolicy {
	return &v1alpha1.EffectivePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Targets:    []v1alpha1.Target{{Kind: kind, Name: name}},
	}
}

func put(ns, name, kind string) change {
	return change{Namespace: ns, Name: name, Object: obj(ns, name, kind)}
}

func del(ns, name string) change { return change{Namespace: ns, Name: name} }

func om(o runtime.Object) metav1.ObjectMeta { return o.(*v1alpha1.EffectivePolicy).ObjectMeta }

func TestApply(t *testing.T) {
	s := newStore(true, 0)
	ctx := context.Background()

	in := put("ns", "a", "HTTPRoute")
	rv, applied := s.Apply([]change{in, put("ns", "b", "Service")})
	// One resourceVersion per event, as etcd gives one per write.
	if rv != at(2) || len(applied) != 2 || s.ResourceVersion() != at(2) || om(applied[1]).ResourceVersion != ats(2) {
		t.Fatalf("rv %d applied %d", rv, len(applied))
	}
	if in.Object.ResourceVersion != "" {
		t.Error("Apply modified its input")
	}
	a := om(applied[0])
	if a.ResourceVersion != ats(1) || a.UID == "" || !a.CreationTimestamp.Time.After(t0) {
		t.Errorf("metadata %+v", a)
	}
	if om(applied[1]).UID == a.UID {
		t.Error("two objects share a uid")
	}

	for _, tc := range []struct {
		name    string
		changes []change
		wantRV  uint64
		applied int
	}{
		{"same content is a no-op", []change{put("ns", "a", "HTTPRoute")}, at(2), 0},
		{"metadata noise is a no-op", []change{{Namespace: "ns", Name: "a", Object: func() *v1alpha1.EffectivePolicy {
			o := obj("ns", "a", "HTTPRoute")
			o.ResourceVersion, o.UID, o.CreationTimestamp = "77", "x", metav1.Now()
			o.Kind = "EffectivePolicy"
			return o
		}()}}, at(2), 0},
		{"delete of a missing key is a no-op", []change{del("ns", "zzz"), del("other", "a")}, at(2), 0},
		{"empty", nil, at(2), 0},
		{"change", []change{put("ns", "a", "Gateway"), put("ns", "b", "Service")}, at(3), 1},
		{"last change per key wins", []change{put("ns", "c", "Gateway"), del("ns", "c"), put("ns", "c", "Service")}, at(4), 1},
		{"delete", []change{del("ns", "b")}, at(5), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rv, applied := s.Apply(tc.changes)
			if rv != tc.wantRV || len(applied) != tc.applied {
				t.Fatalf("rv %d applied %d, want %d %d", rv, len(applied), tc.wantRV, tc.applied)
			}
		})
	}

	got, err := s.Get(ctx, "ns", "a")
	if err != nil {
		t.Fatal(err)
	}
	m := om(got)
	if m.ResourceVersion != ats(3) || m.UID != a.UID || !m.CreationTimestamp.Equal(&a.CreationTimestamp) ||
		got.Targets[0].Kind != "Gateway" {
		t.Errorf("modified object: %+v", got)
	}
	if c, _ := s.Get(ctx, "ns", "c"); c.Targets[0].Kind != "Service" {
		t.Errorf("last change did not win: %+v", c)
	}
	if _, err := s.Get(ctx, "ns", "b"); !apierrors.IsNotFound(err) {
		t.Errorf("deleted object: %v", err)
	}
	if _, err := s.Get(ctx, "other", "a"); !apierrors.IsNotFound(err) {
		t.Errorf("other namespace: %v", err)
	}

	// A re-created object gets a new uid.
	s.Apply([]change{del("ns", "a")})
	_, applied = s.Apply([]change{put("ns", "a", "Gateway")})
	if om(applied[0]).UID == a.UID {
		t.Error("re-created object kept its uid")
	}
}

func TestDeleteCarriesNewRV(t *testing.T) {
	s := newStore(true, 0)
	s.Apply([]change{put("ns", "a", "HTTPRoute")})
	rv, applied := s.Apply([]change{del("ns", "a")})
	if rv != at(2) || len(applied) != 1 || om(applied[0]).ResourceVersion != ats(2) || om(applied[0]).Name != "a" {
		t.Fatalf("rv %d applied %+v", rv, applied)
	}
}

func TestListAndScope(t *testing.T) {
	ctx := context.Background()
	s := newStore(true, 0)
	s.Apply([]change{put("b", "x", "K"), put("a", "y", "K"), put("a", "x", "K"), put("ab", "x", "K")})
	for _, tc := range []struct {
		ns   string
		want []string
	}{
		{"", []string{"a/x", "a/y", "ab/x", "b/x"}},
		{"a", []string{"a/x", "a/y"}},
		{"zz", nil},
	} {
		objs, rv, err := s.List(ctx, tc.ns)
		if err != nil || rv != at(4) {
			t.Fatal(rv, err)
		}
		var got []string
		for _, o := range objs {
			got = append(got, om(o).Namespace+"/"+om(o).Name)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("List(%q) = %v, want %v", tc.ns, got, tc.want)
		}
	}

	c := New[*v1alpha1.ClusterEffectivePolicy](Options{Resource: v1alpha1.Resource("clustereffectivepolicies"), Epoch: testEpoch})
	c.Apply([]Change[*v1alpha1.ClusterEffectivePolicy]{{Namespace: "ignored", Name: "gc", Object: &v1alpha1.ClusterEffectivePolicy{ObjectMeta: metav1.ObjectMeta{Name: "gc"}}}})
	o, err := c.Get(ctx, "", "gc")
	if err != nil || o.Namespace != "" {
		t.Fatalf("cluster-scoped get: %v %v", o, err)
	}
	if objs, _, _ := c.List(ctx, "whatever"); len(objs) != 1 {
		t.Errorf("cluster-scoped list ignores the namespace: %d", len(objs))
	}
}

func TestRestoreAndSnapshot(t *testing.T) {
	ctx := context.Background()
	s := newStore(true, 0)
	s.Apply([]change{put("a", "x", "K"), put("b", "y", "K")})
	s.Apply([]change{put("a", "x", "L")})
	snap, rv := s.Snapshot()
	if rv != at(3) || len(snap) != 2 {
		t.Fatalf("snapshot %d %d", rv, len(snap))
	}
	running, err := s.Watch(ctx, "", at(3))
	if err != nil {
		t.Fatal(err)
	}

	r := newStore(true, 0)
	r.Restore(snap, testEpoch, at(10))
	if r.ResourceVersion() != at(10) {
		t.Errorf("rv %d", r.ResourceVersion())
	}
	got, _ := r.Get(ctx, "a", "x")
	if om(got).ResourceVersion != ats(3) || om(got).UID != om(snap[0]).UID {
		t.Errorf("restored object lost its metadata: %+v", om(got))
	}
	if _, err := r.Watch(ctx, "", at(9)); !apierrors.IsResourceExpired(err) {
		t.Errorf("watch before the restored rv: %v", err)
	}
	// Unchanged content after a restore is a no-op and keeps the metadata.
	if rv, applied := r.Apply([]change{put("a", "x", "L")}); rv != at(10) || applied != nil {
		t.Errorf("no-op after restore: %d %v", rv, applied)
	}
	rv, applied := r.Apply([]change{put("a", "x", "M")})
	if rv != at(11) || om(applied[0]).UID != om(snap[0]).UID || !om(applied[0]).CreationTimestamp.Time.Equal(om(snap[0]).CreationTimestamp.Time) {
		t.Errorf("modify after restore: %d %+v", rv, om(applied[0]))
	}

	// The restored rv is raised to the highest object rv.
	r2 := newStore(true, 0)
	r2.Restore(snap, 0, 0)
	if r2.ResourceVersion() != at(3) {
		t.Errorf("rv %d, want 3", r2.ResourceVersion())
	}

	// Restore stops running watches.
	s.Restore(nil, 0, at(5))
	select {
	case _, ok := <-running.ResultChan():
		if ok {
			t.Error("unexpected event")
		}
	case <-time.After(5 * time.Second):
		t.Error("watch not stopped by Restore")
	}
}

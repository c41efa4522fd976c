package versioned

import (
	"context"
	"strconv"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/resourceversion"
)

func TestEpochEncoding(t *testing.T) {
	for i := 0; i < 100; i++ {
		e := resourceversion.NewEpoch()
		if e == 0 || e > resourceversion.MaxEpoch {
			t.Fatalf("epoch %d", e)
		}
	}
	rv := resourceversion.Make(resourceversion.MaxEpoch, 1<<resourceversion.CounterBits-1)
	if rv >= 1<<63 || resourceversion.EpochOf(rv) != resourceversion.MaxEpoch {
		t.Errorf("rv %d (epoch %d)", rv, resourceversion.EpochOf(rv))
	}
	if s := New[*v1alpha1.EffectivePolicy](Options{}); s.Epoch() == 0 || resourceversion.EpochOf(s.ResourceVersion()) != s.Epoch() {
		t.Errorf("new store: epoch %d rv %d", s.Epoch(), s.ResourceVersion())
	}
}

// replicas returns two stores with the same content but different epochs,
// as two replicas computing the same outputs have.
func replicas(t *testing.T) (a, b *testStore) {
	a, b = New[*v1alpha1.EffectivePolicy](Options{Namespaced: true, Epoch: 7}), New[*v1alpha1.EffectivePolicy](Options{Namespaced: true, Epoch: 8})
	for _, s := range []*testStore{a, b} {
		s.Apply([]change{put("ns", "x", "K"), put("ns", "y", "K")})
	}
	// B has a longer history: its counter is ahead of A's.
	for i := 0; i < 5; i++ {
		b.Apply([]change{put("ns", "x", strconv.Itoa(i))})
	}
	b.Apply([]change{put("ns", "x", "K")})
	return a, b
}

func TestWatchForeignEpochIsGone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, b := replicas(t)
	fromA := a.ResourceVersion()
	// A deletes y; a client that listed A, then watches B from A's rv must
	// not miss it silently: B answers 410 so that the client relists.
	a.Apply([]change{del("ns", "y")})
	b.Apply([]change{del("ns", "y")})
	for _, rv := range []uint64{fromA, resourceversion.Make(a.Epoch(), 0), resourceversion.Make(a.Epoch(), 1<<resourceversion.CounterBits-1)} {
		_, err := b.Watch(ctx, "", rv)
		if !apierrors.IsResourceExpired(err) || !strings.Contains(err.Error(), "another server instance") {
			t.Errorf("watch on B from A's rv %d: %v", rv, err)
		}
		if !b.ForeignResourceVersion(rv) || a.ForeignResourceVersion(rv) {
			t.Errorf("rv %d: foreign to B %v, to A %v", rv, b.ForeignResourceVersion(rv), a.ForeignResourceVersion(rv))
		}
	}
	// The same store's rv resumes.
	w, err := a.Watch(ctx, "", fromA)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if got := describe(recv(t, w)); got != "DELETED ns/y@3" {
		t.Errorf("resumed on A: %s", got)
	}
	// A restored store of the same epoch (a restarted replica) resumes too.
	objs, rv := a.Snapshot()
	r := New[*v1alpha1.EffectivePolicy](Options{Namespaced: true})
	r.Restore(objs, a.Epoch(), rv)
	if r.Epoch() != a.Epoch() || r.ResourceVersion() != rv {
		t.Fatalf("restored epoch %d rv %d", r.Epoch(), r.ResourceVersion())
	}
	if _, err := r.Watch(ctx, "", rv); err != nil {
		t.Errorf("watch on the restored store: %v", err)
	}
	if rv2, _ := r.Apply([]change{put("ns", "z", "K")}); rv2 != rv+1 {
		t.Errorf("rv after restore %d, want %d", rv2, rv+1)
	}
}

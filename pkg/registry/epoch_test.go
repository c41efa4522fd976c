package registry_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/registry"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/versioned"
)

// The versioned store is what the REST layer serves from; the store does
// not import the registry, so that it fits is checked here, where both are
// visible.
var (
	_ registry.Backend      = (*store)(nil)
	_ registry.EpochBackend = (*store)(nil)
)

// replicas returns two stores with the same content but different epochs,
// as two replicas computing the same outputs have.
func replicas(t *testing.T) (a, b *store) {
	t.Helper()
	a, b = newStore(versioned.Options{Namespaced: true, Epoch: 7}), newStore(versioned.Options{Namespaced: true, Epoch: 8})
	for _, s := range []*store{a, b} {
		s.Apply([]change{put("ns", "x", nil), put("ns", "y", nil)})
	}
	// B has a longer history: its counter is ahead of A's.
	for i := 0; i < 5; i++ {
		b.Apply([]change{put("ns", "x", map[string]string{"i": strconv.Itoa(i)})})
	}
	b.Apply([]change{put("ns", "x", nil)})
	return a, b
}

func TestListForeignEpoch(t *testing.T) {
	a, b := replicas(t)
	rest := registry.NewEffectivePolicyREST(b)
	ctx := genericapirequest.WithNamespace(context.Background(), "ns")
	foreign := strconv.FormatUint(a.ResourceVersion(), 10)
	latest := strconv.FormatUint(b.ResourceVersion(), 10)
	for _, tc := range []struct {
		rv    string
		match metav1.ResourceVersionMatch
		gone  bool
	}{
		{foreign, metav1.ResourceVersionMatchNotOlderThan, false},
		{foreign, "", false},
		{foreign, metav1.ResourceVersionMatchExact, true},
		{"0", metav1.ResourceVersionMatchNotOlderThan, false},
		{"", "", false},
		{latest, metav1.ResourceVersionMatchExact, false},
	} {
		out, err := rest.List(ctx, &metainternalversion.ListOptions{ResourceVersion: tc.rv, ResourceVersionMatch: tc.match})
		if tc.gone {
			if !apierrors.IsResourceExpired(err) || !strings.Contains(err.Error(), "another server instance") {
				t.Errorf("list rv=%s match=%q: want 410, got %v", tc.rv, tc.match, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("list rv=%s match=%q: %v", tc.rv, tc.match, err)
			continue
		}
		l := out.(*encoded.List)
		if l.ResourceVersion != latest || len(l.Items) != 2 {
			t.Errorf("list rv=%s match=%q: rv %s, %d items; want the latest (%s, 2)", tc.rv, tc.match, l.ResourceVersion, len(l.Items), latest)
		}
	}
	// The WatchList protocol from a foreign rv sends the latest state.
	yes := true
	w, err := rest.Watch(ctx, &metainternalversion.ListOptions{ResourceVersion: foreign, SendInitialEvents: &yes,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatalf("watch-list from a foreign rv: %v", err)
	}
	w.Stop()
	// A plain watch from it is 410.
	if _, err := rest.Watch(ctx, &metainternalversion.ListOptions{ResourceVersion: foreign}); !apierrors.IsResourceExpired(err) {
		t.Errorf("watch from a foreign rv: %v", err)
	}
}

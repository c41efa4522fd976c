package registry_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/registry"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/versioned"
)

// page lists with opts and returns the names, the continue token, the
// remaining count (-1: unset) and the resourceVersion.
func page(ctx context.Context, t *testing.T, r *registry.REST, opts *metainternalversion.ListOptions) ([]string, string, int64, string) {
	t.Helper()
	obj, err := r.List(ctx, opts)
	if err != nil {
		t.Fatalf("list %+v: %v", opts, err)
	}
	var names []string
	if err := meta.EachListItem(obj, func(o runtime.Object) error {
		m, err := meta.Accessor(o)
		if err != nil {
			return err
		}
		names = append(names, m.GetName())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	la, err := meta.ListAccessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	rem := int64(-1)
	if p := la.GetRemainingItemCount(); p != nil {
		rem = *p
	}
	return names, la.GetContinue(), rem, la.GetResourceVersion()
}

func TestListPaging(t *testing.T) {
	// Each case gets its own store: the case changes it between pages.
	setup := func() (*store, *registry.REST) {
		s := newStore(versioned.Options{Namespaced: true, BookmarkInterval: -1})
		var changes []change
		for i := 0; i < 7; i++ {
			lbl := map[string]string{}
			if i%2 == 0 {
				lbl["even"] = "yes"
			}
			changes = append(changes, put("ns", fmt.Sprintf("p%d", i), lbl))
		}
		changes = append(changes, put("other", "q0", nil))
		s.Apply(changes)
		return s, registry.NewEffectivePolicyREST(s)
	}
	nsCtx := genericapirequest.WithNamespace(context.Background(), "ns")

	for _, tc := range []struct {
		name     string
		ctx      context.Context
		limit    int64
		selector labels.Selector
		want     []string // pages joined by "|"
	}{
		{"no limit", nsCtx, 0, nil, []string{"p0,p1,p2,p3,p4,p5,p6"}},
		{"limit 3", nsCtx, 3, nil, []string{"p0,p1,p2", "p3,p4,p5", "p6"}},
		{"limit equal to the count", nsCtx, 7, nil, []string{"p0,p1,p2,p3,p4,p5,p6"}},
		{"limit larger than the count", nsCtx, 100, nil, []string{"p0,p1,p2,p3,p4,p5,p6"}},
		{"selector", nsCtx, 2, labels.SelectorFromSet(labels.Set{"even": "yes"}), []string{"p0,p2", "p4,p6"}},
		{"all namespaces", genericapirequest.WithNamespace(context.Background(), ""), 5, nil, []string{"p0,p1,p2,p3,p4", "p5,p6,q0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, r := setup()
			opts := &metainternalversion.ListOptions{Limit: tc.limit, LabelSelector: tc.selector}
			var got []string
			firstRV := ""
			for i := 0; ; i++ {
				names, token, rem, rv := page(tc.ctx, t, r, opts)
				if firstRV == "" {
					firstRV = rv
				} else if rv != firstRV {
					t.Errorf("page %d at resourceVersion %s, the first at %s", i, rv, firstRV)
				}
				if token != "" && tc.selector == nil && rem <= 0 {
					t.Errorf("page %d: remainingItemCount %d with more to come", i, rem)
				}
				got = append(got, strings.Join(names, ","))
				if token == "" {
					break
				}
				if i > 10 {
					t.Fatal("paging does not end")
				}
				if i == 0 {
					// A change between pages is not seen: the list is
					// consistent at the first page's resourceVersion.
					s.Apply([]change{put("ns", "p1", map[string]string{"changed": "yes"}), put("ns", "zz", nil)})
				}
				opts = &metainternalversion.ListOptions{Limit: tc.limit, LabelSelector: tc.selector, Continue: token}
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("pages %q, want %q", got, tc.want)
			}
		})
	}
}

func TestListContinueErrors(t *testing.T) {
	s := newStore(versioned.Options{Namespaced: true, BookmarkInterval: -1})
	r := registry.NewEffectivePolicyREST(s)
	s.Apply([]change{put("ns", "a", nil), put("ns", "b", nil), put("ns2", "c", nil)})
	nsCtx := genericapirequest.WithNamespace(context.Background(), "ns")
	_, token, _, _ := page(nsCtx, t, r, &metainternalversion.ListOptions{Limit: 1})
	if token == "" {
		t.Fatal("no continue token")
	}
	other := registry.NewEffectivePolicyREST(s) // another replica's or a restarted server's storage
	for _, tc := range []struct {
		name  string
		r     *registry.REST
		ctx   context.Context
		token string
		check func(error) bool
	}{
		{"garbage", r, nsCtx, "!!not-a-token", apierrors.IsBadRequest},
		{"another namespace", r, genericapirequest.WithNamespace(context.Background(), "ns2"), token, apierrors.IsBadRequest},
		{"cluster-wide with a namespace's token", r, genericapirequest.WithNamespace(context.Background(), ""), token, apierrors.IsBadRequest},
		{"unknown snapshot", other, nsCtx, token, apierrors.IsResourceExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.r.List(tc.ctx, &metainternalversion.ListOptions{Limit: 1, Continue: tc.token})
			if !tc.check(err) {
				t.Errorf("got %v", err)
			}
		})
	}
}

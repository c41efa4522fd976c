package registry_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/registry"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/resourceversion"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/versioned"
)

// The stores of these tests hold outputs in the form the REST layer serves.
type (
	store  = versioned.Store[*encoded.Object]
	change = versioned.Change[*encoded.Object]
)

func newStore(opts versioned.Options) *store { return versioned.New[*encoded.Object](opts) }

func put(ns, name string, lbls map[string]string) change {
	return change{Namespace: ns, Name: name, Object: encoded.MustNew(&v1alpha1.EffectivePolicy{
		ObjectMeta: metav1.ObjectMeta{Labels: lbls},
	})}
}

func recv(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case e, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return e
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
	}
	return watch.Event{}
}

// at is the resourceVersion of counter n of s's epoch.
func at(s *store, n uint64) string {
	return resourceversion.Format(resourceversion.Make(s.Epoch(), n))
}

func describe(e watch.Event) string {
	p := e.Object.(*encoded.Object)
	return fmt.Sprintf("%s %s", e.Type, p.Name)
}

// A watch resumed from a resourceVersion does not know which objects the
// client holds: an object that stops matching is reported DELETED.
func TestResumedWatchSelectorTransitions(t *testing.T) {
	s := newStore(versioned.Options{Namespaced: true, BookmarkInterval: -1})
	r := registry.NewEffectivePolicyREST(s)
	ctx := genericapirequest.WithNamespace(context.Background(), "ns")
	s.Apply([]change{put("ns", "a", map[string]string{"app": "x"}), put("ns", "b", nil)})
	from := s.ResourceVersion()

	w, err := r.Watch(ctx, &metainternalversion.ListOptions{
		ResourceVersion: fmt.Sprint(from),
		LabelSelector:   labels.SelectorFromSet(labels.Set{"app": "x"}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for _, step := range []struct {
		change change
		want   string
	}{
		{put("ns", "a", map[string]string{"app": "x", "v": "2"}), "MODIFIED a"},
		{put("ns", "b", map[string]string{"app": "y"}), "DELETED b"}, // unknown to the watch: may be held
		{put("ns", "b", map[string]string{"app": "x"}), "ADDED b"},
		{put("ns", "a", map[string]string{"app": "y"}), "DELETED a"},
		{put("ns", "c", map[string]string{"app": "x"}), "ADDED c"},
	} {
		s.Apply([]change{step.change})
		if got := describe(recv(t, w)); got != step.want {
			t.Fatalf("got %s, want %s", got, step.want)
		}
	}
}

func TestBookmarksOnlyWhenAllowed(t *testing.T) {
	s := newStore(versioned.Options{Namespaced: true, BookmarkInterval: 10 * time.Millisecond})
	r := registry.NewEffectivePolicyREST(s)
	ctx := genericapirequest.WithNamespace(context.Background(), "ns")
	s.Apply([]change{put("other", "a", nil)})
	for _, allow := range []bool{true, false} {
		t.Run(fmt.Sprint(allow), func(t *testing.T) {
			w, err := r.Watch(ctx, &metainternalversion.ListOptions{ResourceVersion: at(s, 1), AllowWatchBookmarks: allow})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			s.Apply([]change{put("other", "b", nil)})
			select {
			case e := <-w.ResultChan():
				p, ok := e.Object.(*encoded.Object) // of the resource's kind, as every object served
				if !allow || e.Type != watch.Bookmark || !ok || p.ResourceVersion == "" || p.GetObjectKind().GroupVersionKind().Kind != "EffectivePolicy" {
					t.Fatalf("unexpected %s %#v", e.Type, e.Object)
				}
			case <-time.After(200 * time.Millisecond):
				if allow {
					t.Fatal("no bookmark")
				}
			}
		})
	}
}

func TestListErrors(t *testing.T) {
	s := newStore(versioned.Options{Namespaced: true})
	r := registry.NewEffectivePolicyREST(s)
	ctx := genericapirequest.WithNamespace(context.Background(), "ns")
	s.Apply([]change{put("ns", "a", nil)})
	s.Apply([]change{put("ns", "b", nil)})
	for _, tc := range []struct {
		name string
		opts metainternalversion.ListOptions
		is   func(error) bool
	}{
		{"bad field", metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.x", "y")}, apierrors.IsBadRequest},
		{"bad rv", metainternalversion.ListOptions{ResourceVersion: "abc"}, apierrors.IsBadRequest},
		{"exact old rv", metainternalversion.ListOptions{ResourceVersion: at(s, 1), ResourceVersionMatch: metav1.ResourceVersionMatchExact}, apierrors.IsResourceExpired},
		{"future rv", metainternalversion.ListOptions{ResourceVersion: at(s, 9)}, func(err error) bool {
			return apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge)
		}},
		{"exact current rv", metainternalversion.ListOptions{ResourceVersion: at(s, 2), ResourceVersionMatch: metav1.ResourceVersionMatchExact}, func(err error) bool { return err == nil }},
		{"not older than", metainternalversion.ListOptions{ResourceVersion: at(s, 1), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, func(err error) bool { return err == nil }},
		{"exact rv of another epoch", metainternalversion.ListOptions{ResourceVersion: resourceversion.Format(resourceversion.Make(s.Epoch()%resourceversion.MaxEpoch+1, 2)), ResourceVersionMatch: metav1.ResourceVersionMatchExact}, apierrors.IsResourceExpired},
		{"future rv of another epoch", metainternalversion.ListOptions{ResourceVersion: resourceversion.Format(resourceversion.Make(s.Epoch()%resourceversion.MaxEpoch+1, 9))}, func(err error) bool { return err == nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.List(ctx, &tc.opts)
			if !tc.is(err) {
				t.Errorf("unexpected error %v", err)
			}
		})
	}
}

func TestTableNoHeaders(t *testing.T) {
	r := registry.NewClusterEffectivePolicyREST(newStore(versioned.Options{}))
	obj := &v1alpha1.ClusterEffectivePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "gc", ResourceVersion: "7"},
		Targets: []v1alpha1.Target{{Kind: "GatewayClass", Name: "gc", Policies: []v1alpha1.TargetPolicy{
			{Kind: "B", Sources: []v1alpha1.PolicySource{{Name: "p"}, {Name: "q"}}},
			{Kind: "A", Sources: []v1alpha1.PolicySource{{Name: "p"}}},
		}}},
	}
	// Both forms: the API machinery converts what Get and List return (the
	// encoded form), and in table watches the decoded object.
	for _, in := range []runtime.Object{obj, encoded.MustNew(obj)} {
		table, err := r.ConvertToTable(context.Background(), in, &metav1.TableOptions{NoHeaders: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(table.ColumnDefinitions) != 0 || table.ResourceVersion != "7" || len(table.Rows) != 1 {
			t.Fatalf("%T: %+v", in, table)
		}
		if got := fmt.Sprint(table.Rows[0].Cells); got != "[gc GatewayClass 3 A,B <none> <unknown>]" {
			t.Errorf("%T: cells %s", in, got)
		}
	}
}

// TestTableAssumed: the Assumed column lists the kinds whose semantics were assumed (docs/spec.md
// §4.1), of an EffectivePolicy and of a PolicyReach, in both forms.
func TestTableAssumed(t *testing.T) {
	assumed, described := v1alpha1.SemanticsAssumed, "EnvoyGateway"
	ep := &v1alpha1.EffectivePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Targets: []v1alpha1.Target{
			{Kind: "HTTPRoute", Name: "web", Policies: []v1alpha1.TargetPolicy{
				{Kind: "ZPolicy", Semantics: assumed, Sources: []v1alpha1.PolicySource{{Name: "z"}}},
				{Kind: "BackendTrafficPolicy", Semantics: described, Sources: []v1alpha1.PolicySource{{Name: "b"}}},
			}},
			{Kind: "Service", Name: "web", Policies: []v1alpha1.TargetPolicy{
				{Kind: "APolicy", Semantics: assumed, Sources: []v1alpha1.PolicySource{{Name: "a"}}},
				{Kind: "ZPolicy", Semantics: assumed, Sources: []v1alpha1.PolicySource{{Name: "z"}}},
			}},
		},
	}
	pr := &v1alpha1.PolicyReach{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Policies: []v1alpha1.ReachPolicy{
			{Kind: "BackendTrafficPolicy", Semantics: described, Summary: v1alpha1.ReachSummary{Targets: 1, Enforced: 1}},
			{Kind: "RetryPolicy", Semantics: assumed},
		},
	}
	for _, tc := range []struct {
		name string
		rest *registry.REST
		obj  runtime.Object
		cols string
		want string
	}{
		{"effectivepolicy", registry.NewEffectivePolicyREST(newStore(versioned.Options{Namespaced: true})), ep,
			"[Name Targets Policies Kinds Assumed Age]", "[web HTTPRoute,Service 3 APolicy,BackendTrafficPolicy,ZPolicy APolicy,ZPolicy <unknown>]"},
		{"policyreach", registry.NewPolicyReachREST(newStore(versioned.Options{Namespaced: true})), pr,
			"[Name Kinds Assumed Targets Enforced Partial Overridden Conflicted Invalid Age]",
			"[p BackendTrafficPolicy,RetryPolicy RetryPolicy 1 1 0 0 0 0 <unknown>]"},
	} {
		for _, in := range []runtime.Object{tc.obj, encoded.MustNew(tc.obj)} {
			t.Run(fmt.Sprintf("%s %T", tc.name, in), func(t *testing.T) {
				table, err := tc.rest.ConvertToTable(context.Background(), in, &metav1.TableOptions{})
				if err != nil {
					t.Fatal(err)
				}
				var cols []string
				for _, c := range table.ColumnDefinitions {
					cols = append(cols, c.Name)
				}
				if got := fmt.Sprint(cols); got != tc.cols {
					t.Errorf("columns %s, want %s", got, tc.cols)
				}
				if len(table.Rows) != 1 {
					t.Fatalf("rows %+v", table.Rows)
				}
				if got := fmt.Sprint(table.Rows[0].Cells); got != tc.want {
					t.Errorf("cells %s, want %s", got, tc.want)
				}
			})
		}
	}
}

func TestGetNotFoundNamesTheResource(t *testing.T) {
	// A backend that does not know its resource still yields a proper Status.
	r := registry.NewEffectivePolicyREST(newStore(versioned.Options{Namespaced: true}))
	_, err := r.Get(genericapirequest.WithNamespace(context.Background(), "ns"), "nope", &metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("got %v", err)
	}
	d := err.(apierrors.APIStatus).Status().Details
	if d == nil || d.Group != "effectivepolicy.dev" || d.Kind != "effectivepolicies" || d.Name != "nope" {
		t.Errorf("details %+v", d)
	}
}

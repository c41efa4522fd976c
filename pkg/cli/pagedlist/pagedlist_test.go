package pagedlist

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/generated/clientset/versioned"
)

// pageServer serves a list of EffectivePolicies in pages as the API server
// does (limit, continue), with the faults a test asks for.
type pageServer struct {
	items []v1alpha1.EffectivePolicy
	// itemsFirst writes the items before the list's metadata.
	itemsFirst bool
	// expireAt answers 410 to the continue of this page (1-based; 0 never).
	expireAt int
	// status answers every request with this code (a Status body) when set.
	status int
	// badItem writes a name that is not a string in this page (0 never).
	badItem int
	// noRemaining leaves remainingItemCount out, as for a list with a selector.
	noRemaining bool

	mu       sync.Mutex
	requests []string
}

func (s *pageServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.URL.Path+"?"+r.URL.RawQuery)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if s.status != 0 {
		s.fail(w, s.status, metav1.StatusReasonForbidden, "effectivepolicies is forbidden")
		return
	}
	q := r.URL.Query()
	from, _ := strconv.Atoi(q.Get("continue"))
	limit, _ := strconv.Atoi(q.Get("limit"))
	page := 1
	if limit > 0 {
		page = from/limit + 1
	}
	if from > 0 && page == s.expireAt {
		s.fail(w, http.StatusGone, metav1.StatusReasonExpired, "the continue token is too old")
		return
	}
	to := len(s.items)
	if limit > 0 && from+limit < to {
		to = from + limit
	}
	next := ""
	if to < len(s.items) {
		next = strconv.Itoa(to)
	}
	items, _ := json.Marshal(s.items[from:to])
	if page == s.badItem {
		items = []byte(`[{"metadata":{"name":5}}]`)
	}
	meta := metav1.ListMeta{ResourceVersion: strconv.Itoa(10 + page - 1), Continue: next}
	if remaining := int64(len(s.items) - to); next != "" && !s.noRemaining {
		meta.RemainingItemCount = &remaining
	}
	lm, _ := json.Marshal(meta)
	head := `"kind":"EffectivePolicyList","apiVersion":"effectivepolicy.dev/v1alpha1"`
	if s.itemsFirst {
		fmt.Fprintf(w, `{"items":%s,%s,"metadata":%s}`, items, head, lm)
		return
	}
	fmt.Fprintf(w, `{%s,"metadata":%s,"items":%s}`, head, lm, items)
}

func (s *pageServer) fail(w http.ResponseWriter, code int, reason metav1.StatusReason, msg string) {
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: int32(code), Reason: reason, Message: msg,
	})
}

func policies(n int) []v1alpha1.EffectivePolicy {
	out := make([]v1alpha1.EffectivePolicy, n)
	for i := range out {
		out[i] = v1alpha1.EffectivePolicy{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("route-%d", i), Namespace: "app", ResourceVersion: strconv.Itoa(i + 1)},
			Targets: []v1alpha1.Target{{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Name: fmt.Sprintf("route-%d", i),
				Policies: []v1alpha1.TargetPolicy{{Group: "example.com", Kind: "RetryPolicy", Class: v1alpha1.ClassInherited}}}},
		}
	}
	return out
}

func client(t *testing.T, s *pageServer) rest.Interface {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c, err := versioned.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c.EffectivepolicyV1alpha1().RESTClient()
}

func newList() kruntime.Object { return &v1alpha1.EffectivePolicyList{} }

func TestList(t *testing.T) {
	tests := []struct {
		name   string
		server pageServer
		size   int64
		// requests are the limit and continue of each request, in order.
		requests []string
		wantErr  func(error) bool
		errHas   string
	}{
		{name: "one page", server: pageServer{items: policies(3)}, size: 5,
			requests: []string{"limit=5"}},
		{name: "three pages", server: pageServer{items: policies(7)}, size: 3,
			requests: []string{"limit=3", "continue=3&limit=3", "continue=6&limit=3"}},
		{name: "no items", server: pageServer{}, size: 3, requests: []string{"limit=3"}},
		{name: "items before the metadata", server: pageServer{items: policies(7), itemsFirst: true}, size: 3,
			requests: []string{"limit=3", "continue=3&limit=3", "continue=6&limit=3"}},
		{name: "a continue token expired: one request for all", server: pageServer{items: policies(7), expireAt: 2}, size: 3,
			requests: []string{"limit=3", "continue=3&limit=3", ""}},
		{name: "forbidden", server: pageServer{items: policies(3), status: http.StatusForbidden}, size: 3,
			requests: []string{"limit=3"}, wantErr: apierrors.IsForbidden},
		{name: "a page that does not decode", server: pageServer{items: policies(7), badItem: 2}, size: 3,
			requests: []string{"limit=3", "continue=3&limit=3", "continue=6&limit=3"},
			errHas:   "reading the list of effectivepolicies: page 2: json: cannot unmarshal number"},
	}
	for i := range tests {
		tt := &tests[i]
		t.Run(tt.name, func(t *testing.T) {
			got, err := List(context.Background(), Request{Client: client(t, &tt.server), Namespace: "app",
				Resource: "effectivepolicies", NewList: newList, PageSize: tt.size})
			var queries []string
			for _, r := range tt.server.requests {
				path, query, _ := strings.Cut(r, "?")
				if path != "/apis/effectivepolicy.dev/v1alpha1/namespaces/app/effectivepolicies" {
					t.Errorf("request path %s", path)
				}
				queries = append(queries, query)
			}
			if !reflect.DeepEqual(queries, tt.requests) {
				t.Errorf("requests %q, want %q", queries, tt.requests)
			}
			switch {
			case tt.wantErr != nil || tt.errHas != "":
				if err == nil || (tt.wantErr != nil && !tt.wantErr(err)) || !strings.Contains(fmt.Sprint(err), tt.errHas) {
					t.Fatalf("error %v, want one containing %q", err, tt.errHas)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			want := &v1alpha1.EffectivePolicyList{ListMeta: metav1.ListMeta{ResourceVersion: "10"}, Items: tt.server.items}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("list\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

// TestListAsClientset: the list is the one a clientset's List decodes from
// the same answer, field for field.
func TestListAsClientset(t *testing.T) {
	s := &pageServer{items: policies(4)}
	c := client(t, s)
	want, err := versioned.New(c).EffectivepolicyV1alpha1().EffectivePolicies("app").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := List(context.Background(), Request{Client: c, Namespace: "app", Resource: "effectivepolicies", NewList: newList, PageSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("paged\n%+v\nclientset\n%+v", got, want)
	}
}

func TestListCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := List(ctx, Request{Client: client(t, &pageServer{items: policies(3)}), Resource: "effectivepolicies", NewList: newList})
	if err == nil {
		t.Fatal("a canceled list answered")
	}
}

// TestListProgress: the context's Progress hears of every page but the
// last: the objects so far and the total when the server says it.
func TestListProgress(t *testing.T) {
	tests := []struct {
		name   string
		server pageServer
		size   int64
		want   [][2]int64
	}{
		{name: "three pages", server: pageServer{items: policies(7)}, size: 3, want: [][2]int64{{3, 7}, {6, 7}}},
		{name: "items before the metadata", server: pageServer{items: policies(7), itemsFirst: true}, size: 3, want: [][2]int64{{3, 7}, {6, 7}}},
		{name: "the total not said", server: pageServer{items: policies(7), noRemaining: true}, size: 3, want: [][2]int64{{3, -1}, {6, -1}}},
		{name: "one page", server: pageServer{items: policies(3)}, size: 3},
	}
	for i := range tests {
		tt := &tests[i]
		t.Run(tt.name, func(t *testing.T) {
			var got [][2]int64
			ctx := WithProgress(context.Background(), func(listed, total int64) { got = append(got, [2]int64{listed, total}) })
			if _, err := List(ctx, Request{Client: client(t, &tt.server), Resource: "effectivepolicies", NewList: newList, PageSize: tt.size}); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("progress %v, want %v", got, tt.want)
			}
		})
	}
}

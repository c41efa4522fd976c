package registry_test

import (
	"context"
	"testing"
	"time"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/access"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/access/accesstest"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/registry"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/versioned"
)

const (
	noneInA   = `{"apiKey":"k-123","hosts":"<redacted>","oidc":{"clientID":"id","clientSecret":"<redacted>"},"timeout":"5s"}`
	colorSpec = `{"apiKey":"visible"}`
)

func userCtx(name string, groups ...string) context.Context {
	ctx := genericapirequest.WithNamespace(context.Background(), "app")
	return genericapirequest.WithUser(ctx, &user.DefaultInfo{Name: name, Groups: groups})
}

func TestRedactGetListWatch(t *testing.T) {
	authz := &accesstest.PolicyAuthorizer{Allow: map[string]map[string]bool{
		"ns-a": {"alice": true},
		"ns-b": {"alice": true, "bob": true},
	}}
	red := access.NewRedactor(authz, accesstest.Sensitive, time.Minute)
	s := newStore(versioned.Options{Namespaced: true, BookmarkInterval: -1})
	r := registry.NewEffectivePolicyREST(s, registry.WithRedactor(red))
	s.Apply([]change{{Namespace: "app", Name: "rt", Object: encoded.MustNew(accesstest.Object("app", "rt"))}})

	for _, tc := range []struct {
		who  string
		ctx  context.Context
		want string
	}{
		{"allowed in both namespaces", userCtx("alice"), accesstest.AllVisible},
		{"allowed only in ns-b (namespace-scoped decision)", userCtx("bob"), noneInA},
		{"denied everywhere", userCtx("carol"), accesstest.NoneAtAll},
		{"no user", genericapirequest.WithNamespace(context.Background(), "app"), accesstest.NoneAtAll},
	} {
		t.Run(tc.who, func(t *testing.T) {
			obj, err := r.Get(tc.ctx, "rt", &metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			auth, color := accesstest.Specs(t, obj)
			if auth != tc.want || color != colorSpec {
				t.Errorf("get:\n got  %s %s\n want %s %s", auth, color, tc.want, colorSpec)
			}
			// fieldSources stay: the caller still sees who set the value.
			if fs := accesstest.Decoded(t, obj).(*v1alpha1.EffectivePolicy).Targets[0].Policies[0].Effective[0].FieldSources; fs["/oidc/clientSecret"] != "ns-a/secret-pol" || len(fs) != 5 {
				t.Errorf("fieldSources %v", fs)
			}

			list, err := r.List(tc.ctx, &metainternalversion.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			items := list.(*encoded.List).Items
			if len(items) != 1 {
				t.Fatalf("%d items", len(items))
			}
			if auth, _ := accesstest.Specs(t, items[0]); auth != tc.want {
				t.Errorf("list:\n got  %s\n want %s", auth, tc.want)
			}

			w, err := r.Watch(tc.ctx, &metainternalversion.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			if auth, _ := accesstest.Specs(t, recv(t, w).Object); auth != tc.want {
				t.Errorf("watch (initial):\n got  %s\n want %s", auth, tc.want)
			}
		})
	}
	// The store's object is untouched: redaction works on copies.
	stored, err := s.Get(context.Background(), "app", "rt")
	if err != nil {
		t.Fatal(err)
	}
	if auth, _ := accesstest.Specs(t, stored); auth != accesstest.AllVisible {
		t.Errorf("stored object changed: %s", auth)
	}
}

// Each watcher sees the events with its own caller's access, and a watch
// started before a change redacts the changed object too.
func TestRedactPerWatcher(t *testing.T) {
	authz := &accesstest.PolicyAuthorizer{Allow: map[string]map[string]bool{"ns-a": {"alice": true}, "ns-b": {"alice": true}}}
	s := newStore(versioned.Options{Namespaced: true, BookmarkInterval: -1})
	r := registry.NewEffectivePolicyREST(s, registry.WithRedactor(access.NewRedactor(authz, accesstest.Sensitive, time.Minute)))
	wa, err := r.Watch(userCtx("alice"), &metainternalversion.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer wa.Stop()
	wc, err := r.Watch(userCtx("carol"), &metainternalversion.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Stop()
	s.Apply([]change{{Namespace: "app", Name: "rt", Object: encoded.MustNew(accesstest.Object("app", "rt"))}})
	if auth, _ := accesstest.Specs(t, recv(t, wa).Object); auth != accesstest.AllVisible {
		t.Errorf("alice's watch: %s", auth)
	}
	if auth, _ := accesstest.Specs(t, recv(t, wc).Object); auth != accesstest.NoneAtAll {
		t.Errorf("carol's watch: %s", auth)
	}
}

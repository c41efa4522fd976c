package registry_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/access"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/registry"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/storage/versioned"
)

var authGR = schema.GroupResource{Group: "auth.example.com", Resource: "authpolicies"}

type sensitiveFields map[schema.GroupKind]access.SensitiveKind

func (f sensitiveFields) SensitiveKind(gk schema.GroupKind) (access.SensitiveKind, bool) {
	sk, ok := f[gk]
	return sk, ok
}

var sensitive = sensitiveFields{
	{Group: "auth.example.com", Kind: "AuthPolicy"}: {Resource: authGR, Paths: []string{"/oidc/clientSecret", "/apiKey", "/hosts/0"}},
}

// fakeAuthz allows "get" on authpolicies to the users listed per namespace.
type fakeAuthz struct {
	mu    sync.Mutex
	allow map[string]map[string]bool // namespace -> user -> allowed
}

func (a *fakeAuthz) Authorize(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if attrs.GetVerb() == "get" && attrs.GetAPIGroup() == authGR.Group && attrs.GetResource() == authGR.Resource &&
		attrs.IsResourceRequest() && a.allow[attrs.GetNamespace()][attrs.GetUser().GetName()] {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// object: one target with an AuthPolicy effective entry whose secret comes
// from ns-a/secret-pol and whose apiKey from ns-b/key-pol, and a ColorPolicy
// (no sensitive sensitiveFields) with a field of the same name.
func object(ns, name string) *v1alpha1.EffectivePolicy {
	return &v1alpha1.EffectivePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Targets: []v1alpha1.Target{{
			Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Name: name,
			Policies: []v1alpha1.TargetPolicy{
				{
					Group: "auth.example.com", Kind: "AuthPolicy",
					Effective: []v1alpha1.EffectiveSpec{{
						Spec: runtime.RawExtension{Raw: []byte(`{"apiKey":"k-123","hosts":["a.example.com","b.example.com"],"oidc":{"clientID":"id","clientSecret":"s3cr3t"},"timeout":"5s"}`)},
						FieldSources: map[string]string{
							"/apiKey": "ns-b/key-pol", "/hosts": "ns-a/secret-pol",
							"/oidc/clientID": "ns-a/secret-pol", "/oidc/clientSecret": "ns-a/secret-pol", "/timeout": "ns-b/key-pol",
						},
					}},
				},
				{
					Group: "colors.example.com", Kind: "ColorPolicy",
					Effective: []v1alpha1.EffectiveSpec{{
						Spec:         runtime.RawExtension{Raw: []byte(`{"apiKey":"visible"}`)},
						FieldSources: map[string]string{"/apiKey": "ns-a/color"},
					}},
				},
			},
		}},
	}
}

func specs(t *testing.T, obj runtime.Object) (auth, color string) {
	t.Helper()
	p := decoded(t, obj).(*v1alpha1.EffectivePolicy)
	tps := p.Targets[0].Policies
	return text(tps[0].Effective[0].Spec.Raw), text(tps[1].Effective[0].Spec.Raw)
}

// decoded returns an object the REST layer or the Redactor handed out (an
// *encoded.Object) as its typed object.
func decoded(t *testing.T, obj runtime.Object) runtime.Object {
	t.Helper()
	dec, err := obj.(*encoded.Object).Decode()
	if err != nil {
		t.Fatal(err)
	}
	return dec
}

// text is a raw spec without json.Marshal's HTML-safe escapes, which the
// encoded form keeps (and the API serves): "\u003credacted\u003e" is
// "<redacted>".
func text(raw []byte) string {
	return strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(raw))
}

const (
	allVisible = `{"apiKey":"k-123","hosts":["a.example.com","b.example.com"],"oidc":{"clientID":"id","clientSecret":"s3cr3t"},"timeout":"5s"}`
	noneInA    = `{"apiKey":"k-123","hosts":"<redacted>","oidc":{"clientID":"id","clientSecret":"<redacted>"},"timeout":"5s"}`
	noneAtAll  = `{"apiKey":"<redacted>","hosts":"<redacted>","oidc":{"clientID":"id","clientSecret":"<redacted>"},"timeout":"5s"}`
	colorSpec  = `{"apiKey":"visible"}`
)

func userCtx(name string, groups ...string) context.Context {
	ctx := genericapirequest.WithNamespace(context.Background(), "app")
	return genericapirequest.WithUser(ctx, &user.DefaultInfo{Name: name, Groups: groups})
}

func TestRedactGetListWatch(t *testing.T) {
	authz := &fakeAuthz{allow: map[string]map[string]bool{
		"ns-a": {"alice": true},
		"ns-b": {"alice": true, "bob": true},
	}}
	red := access.NewRedactor(authz, sensitive, time.Minute)
	s := newStore(versioned.Options{Namespaced: true, BookmarkInterval: -1})
	r := registry.NewEffectivePolicyREST(s, registry.WithRedactor(red))
	s.Apply([]change{{Namespace: "app", Name: "rt", Object: encoded.MustNew(object("app", "rt"))}})

	for _, tc := range []struct {
		who  string
		ctx  context.Context
		want string
	}{
		{"allowed in both namespaces", userCtx("alice"), allVisible},
		{"allowed only in ns-b (namespace-scoped decision)", userCtx("bob"), noneInA},
		{"denied everywhere", userCtx("carol"), noneAtAll},
		{"no user", genericapirequest.WithNamespace(context.Background(), "app"), noneAtAll},
	} {
		t.Run(tc.who, func(t *testing.T) {
			obj, err := r.Get(tc.ctx, "rt", &metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			auth, color := specs(t, obj)
			if auth != tc.want || color != colorSpec {
				t.Errorf("get:\n got  %s %s\n want %s %s", auth, color, tc.want, colorSpec)
			}
			// fieldSources stay: the caller still sees who set the value.
			if fs := decoded(t, obj).(*v1alpha1.EffectivePolicy).Targets[0].Policies[0].Effective[0].FieldSources; fs["/oidc/clientSecret"] != "ns-a/secret-pol" || len(fs) != 5 {
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
			if auth, _ := specs(t, items[0]); auth != tc.want {
				t.Errorf("list:\n got  %s\n want %s", auth, tc.want)
			}

			w, err := r.Watch(tc.ctx, &metainternalversion.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			if auth, _ := specs(t, recv(t, w).Object); auth != tc.want {
				t.Errorf("watch (initial):\n got  %s\n want %s", auth, tc.want)
			}
		})
	}
	// The store's object is untouched: redaction works on copies.
	stored, err := s.Get(context.Background(), "app", "rt")
	if err != nil {
		t.Fatal(err)
	}
	if auth, _ := specs(t, stored); auth != allVisible {
		t.Errorf("stored object changed: %s", auth)
	}
}

// Each watcher sees the events with its own caller's access, and a watch
// started before a change redacts the changed object too.
func TestRedactPerWatcher(t *testing.T) {
	authz := &fakeAuthz{allow: map[string]map[string]bool{"ns-a": {"alice": true}, "ns-b": {"alice": true}}}
	s := newStore(versioned.Options{Namespaced: true, BookmarkInterval: -1})
	r := registry.NewEffectivePolicyREST(s, registry.WithRedactor(access.NewRedactor(authz, sensitive, time.Minute)))
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
	s.Apply([]change{{Namespace: "app", Name: "rt", Object: encoded.MustNew(object("app", "rt"))}})
	if auth, _ := specs(t, recv(t, wa).Object); auth != allVisible {
		t.Errorf("alice's watch: %s", auth)
	}
	if auth, _ := specs(t, recv(t, wc).Object); auth != noneAtAll {
		t.Errorf("carol's watch: %s", auth)
	}
}

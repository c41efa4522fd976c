package access_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/access"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
)

// The Redactor on its own: decisions, their cache, what is redacted and
// how. pkg/registry's tests check that get, list and watch redact.

var authGR = schema.GroupResource{Group: "auth.example.com", Resource: "authpolicies"}

type sensitiveFields map[schema.GroupKind]access.SensitiveKind

func (f sensitiveFields) SensitiveKind(gk schema.GroupKind) (access.SensitiveKind, bool) {
	sk, ok := f[gk]
	return sk, ok
}

var sensitive = sensitiveFields{
	{Group: "auth.example.com", Kind: "AuthPolicy"}: {Resource: authGR, Paths: []string{"/oidc/clientSecret", "/apiKey", "/hosts/0"}},
}

// fakeAuthz allows "get" on authpolicies to the users listed per namespace,
// and counts the checks.
type fakeAuthz struct {
	mu     sync.Mutex
	allow  map[string]map[string]bool // namespace -> user -> allowed
	checks []string
}

func (a *fakeAuthz) Authorize(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.checks = append(a.checks, fmt.Sprintf("%s %s %s/%s %s", attrs.GetUser().GetName(), attrs.GetVerb(), attrs.GetAPIGroup(), attrs.GetResource(), attrs.GetNamespace()))
	if attrs.GetVerb() == "get" && attrs.GetAPIGroup() == authGR.Group && attrs.GetResource() == authGR.Resource &&
		attrs.IsResourceRequest() && a.allow[attrs.GetNamespace()][attrs.GetUser().GetName()] {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func (a *fakeAuthz) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.checks)
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
	noneAtAll  = `{"apiKey":"<redacted>","hosts":"<redacted>","oidc":{"clientID":"id","clientSecret":"<redacted>"},"timeout":"5s"}`
)

func TestRedactionCache(t *testing.T) {
	authz := &fakeAuthz{allow: map[string]map[string]bool{"ns-a": {"alice": true}, "ns-b": {"alice": true}}}
	red := access.NewRedactor(authz, sensitive, time.Minute)
	obj := encoded.MustNew(object("app", "rt"))
	ctx := context.Background()
	alice := &user.DefaultInfo{Name: "alice", Groups: []string{"dev", "ops"}}

	red.Redact(ctx, alice, obj)
	if n := authz.count(); n != 2 { // ns-a and ns-b
		t.Fatalf("%d checks, want 2: %v", n, authz.checks)
	}
	// Cache hit: same user, groups in another order.
	red.Redact(ctx, &user.DefaultInfo{Name: "alice", Groups: []string{"ops", "dev"}}, obj)
	if n := authz.count(); n != 2 {
		t.Fatalf("cache miss: %d checks: %v", n, authz.checks)
	}
	// Other groups: another decision (groups can grant access).
	red.Redact(ctx, &user.DefaultInfo{Name: "alice", Groups: []string{"dev"}}, obj)
	if n := authz.count(); n != 4 {
		t.Fatalf("%d checks after a change of groups, want 4: %v", n, authz.checks)
	}
	// In pointer order: /apiKey (ns-b) before /hosts (ns-a).
	want := []string{"alice get auth.example.com/authpolicies ns-b", "alice get auth.example.com/authpolicies ns-a"}
	for i, w := range want {
		if authz.checks[i] != w {
			t.Errorf("check %d = %q, want %q", i, authz.checks[i], w)
		}
	}
}

func TestRedactionCacheExpires(t *testing.T) {
	authz := &fakeAuthz{allow: map[string]map[string]bool{"ns-a": {"alice": true}, "ns-b": {"alice": true}}}
	red := access.NewRedactor(authz, sensitive, 50*time.Millisecond)
	alice := &user.DefaultInfo{Name: "alice"}
	obj := encoded.MustNew(object("app", "rt"))
	if auth, _ := specs(t, red.Redact(context.Background(), alice, obj)); auth != allVisible {
		t.Fatalf("allowed: %s", auth)
	}
	// Access revoked: the cached decision holds until the TTL ends.
	authz.mu.Lock()
	authz.allow = map[string]map[string]bool{}
	authz.mu.Unlock()
	if auth, _ := specs(t, red.Redact(context.Background(), alice, obj)); auth != allVisible {
		t.Fatalf("within the TTL: %s", auth)
	}
	time.Sleep(80 * time.Millisecond)
	if auth, _ := specs(t, red.Redact(context.Background(), alice, obj)); auth != noneAtAll {
		t.Fatalf("after the TTL: %s", auth)
	}
}

// Objects without sensitive kinds are returned as they are (no copy), and
// values the spec does not hold are not invented.
func TestRedactNothingToDo(t *testing.T) {
	authz := &fakeAuthz{}
	red := access.NewRedactor(authz, sensitive, time.Minute)
	typed := object("app", "rt")
	typed.Targets[0].Policies = typed.Targets[0].Policies[1:] // only the ColorPolicy
	obj := encoded.MustNew(typed)
	if got := red.Redact(context.Background(), &user.DefaultInfo{Name: "carol"}, obj); got != obj {
		t.Error("copied an object with nothing to redact")
	}
	if authz.count() != 0 {
		t.Errorf("checks for nothing: %v", authz.checks)
	}
	// A ClusterEffectivePolicy with a cluster-scoped source: decided at cluster scope.
	c := &v1alpha1.ClusterEffectivePolicy{Targets: []v1alpha1.Target{{Policies: []v1alpha1.TargetPolicy{{
		Group: "auth.example.com", Kind: "AuthPolicy",
		Effective: []v1alpha1.EffectiveSpec{{
			Spec:         runtime.RawExtension{Raw: []byte(`{"apiKey":{"v":1}}`)},
			FieldSources: map[string]string{"/apiKey/v": "global"},
		}},
	}}}}}
	got := decoded(t, red.Redact(context.Background(), &user.DefaultInfo{Name: "carol"}, encoded.MustNew(c))).(*v1alpha1.ClusterEffectivePolicy)
	var v map[string]interface{}
	if err := json.Unmarshal(got.Targets[0].Policies[0].Effective[0].Spec.Raw, &v); err != nil || fmt.Sprint(v) != "map[apiKey:map[v:<redacted>]]" {
		t.Errorf("cluster: %s %v", got.Targets[0].Policies[0].Effective[0].Spec.Raw, err)
	}
	if last := authz.checks[len(authz.checks)-1]; last != "carol get auth.example.com/authpolicies " {
		t.Errorf("cluster-scoped decision: %q", last)
	}
}

// Escaped pointers (~1 for "/", ~0 for "~") and list-map items (leaves
// /list/<index>/<field>) are redacted where they point.
func TestRedactEscapesAndListItems(t *testing.T) {
	gk := schema.GroupKind{Group: "auth.example.com", Kind: "AuthPolicy"}
	idx := sensitiveFields{gk: {Resource: authGR, Paths: []string{"/a~1b", "/c~0d", "/keys"}}}
	red := access.NewRedactor(&fakeAuthz{}, idx, time.Minute)
	obj := &v1alpha1.ClusterEffectivePolicy{Targets: []v1alpha1.Target{{Policies: []v1alpha1.TargetPolicy{{
		Group: gk.Group, Kind: gk.Kind,
		Effective: []v1alpha1.EffectiveSpec{{
			Spec: runtime.RawExtension{Raw: []byte(`{"a/b":"x","c~d":1,"keys":[{"name":"k1","value":"v1"},{"name":"k2","value":"v2"}],"plain":true}`)},
			FieldSources: map[string]string{
				"/a~1b": "ns/p", "/c~0d": "ns/p", "/plain": "ns/p",
				"/keys/0/name": "ns/p", "/keys/0/value": "ns/p", "/keys/1/name": "ns/q", "/keys/1/value": "ns/q",
			},
		}},
	}}}}}
	got := decoded(t, red.Redact(context.Background(), &user.DefaultInfo{Name: "carol"}, encoded.MustNew(obj))).(*v1alpha1.ClusterEffectivePolicy)
	want := `{"a/b":"<redacted>","c~d":"<redacted>","keys":[{"name":"<redacted>","value":"<redacted>"},{"name":"<redacted>","value":"<redacted>"}],"plain":true}`
	if s := text(got.Targets[0].Policies[0].Effective[0].Spec.Raw); s != want {
		t.Errorf("got  %s\nwant %s", s, want)
	}
}

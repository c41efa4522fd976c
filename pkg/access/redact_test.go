package access_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/access"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/access/accesstest"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
)

// The Redactor on its own: decisions, their cache, what is redacted and
// how. pkg/registry's tests check that get, list and watch redact.

func TestRedactionCache(t *testing.T) {
	authz := &accesstest.PolicyAuthorizer{Allow: map[string]map[string]bool{"ns-a": {"alice": true}, "ns-b": {"alice": true}}}
	red := access.NewRedactor(authz, accesstest.Sensitive, time.Minute)
	obj := encoded.MustNew(accesstest.Object("app", "rt"))
	ctx := context.Background()
	alice := &user.DefaultInfo{Name: "alice", Groups: []string{"dev", "ops"}}

	red.Redact(ctx, alice, obj)
	if n := len(authz.Checks()); n != 2 { // ns-a and ns-b
		t.Fatalf("%d checks, want 2: %v", n, authz.Checks())
	}
	// Cache hit: same user, groups in another order.
	red.Redact(ctx, &user.DefaultInfo{Name: "alice", Groups: []string{"ops", "dev"}}, obj)
	if n := len(authz.Checks()); n != 2 {
		t.Fatalf("cache miss: %d checks: %v", n, authz.Checks())
	}
	// Other groups: another decision (groups can grant access).
	red.Redact(ctx, &user.DefaultInfo{Name: "alice", Groups: []string{"dev"}}, obj)
	if n := len(authz.Checks()); n != 4 {
		t.Fatalf("%d checks after a change of groups, want 4: %v", n, authz.Checks())
	}
	// In pointer order: /apiKey (ns-b) before /hosts (ns-a).
	want := []string{"alice get auth.example.com/authpolicies ns-b", "alice get auth.example.com/authpolicies ns-a"}
	for i, w := range want {
		if authz.Checks()[i] != w {
			t.Errorf("check %d = %q, want %q", i, authz.Checks()[i], w)
		}
	}
}

func TestRedactionCacheExpires(t *testing.T) {
	authz := &accesstest.PolicyAuthorizer{Allow: map[string]map[string]bool{"ns-a": {"alice": true}, "ns-b": {"alice": true}}}
	red := access.NewRedactor(authz, accesstest.Sensitive, 50*time.Millisecond)
	alice := &user.DefaultInfo{Name: "alice"}
	obj := encoded.MustNew(accesstest.Object("app", "rt"))
	if auth, _ := accesstest.Specs(t, red.Redact(context.Background(), alice, obj)); auth != accesstest.AllVisible {
		t.Fatalf("allowed: %s", auth)
	}
	// Access revoked: the cached decision holds until the TTL ends.
	authz.SetAllow(map[string]map[string]bool{})
	if auth, _ := accesstest.Specs(t, red.Redact(context.Background(), alice, obj)); auth != accesstest.AllVisible {
		t.Fatalf("within the TTL: %s", auth)
	}
	time.Sleep(80 * time.Millisecond)
	if auth, _ := accesstest.Specs(t, red.Redact(context.Background(), alice, obj)); auth != accesstest.NoneAtAll {
		t.Fatalf("after the TTL: %s", auth)
	}
}

// Objects without sensitive kinds are returned as they are (no copy), and
// values the spec does not hold are not invented.
func TestRedactNothingToDo(t *testing.T) {
	authz := &accesstest.PolicyAuthorizer{}
	red := access.NewRedactor(authz, accesstest.Sensitive, time.Minute)
	typed := accesstest.Object("app", "rt")
	typed.Targets[0].Policies = typed.Targets[0].Policies[1:] // only the ColorPolicy
	obj := encoded.MustNew(typed)
	if got := red.Redact(context.Background(), &user.DefaultInfo{Name: "carol"}, obj); got != obj {
		t.Error("copied an object with nothing to redact")
	}
	if len(authz.Checks()) != 0 {
		t.Errorf("checks for nothing: %v", authz.Checks())
	}
	// A ClusterEffectivePolicy with a cluster-scoped source: decided at cluster scope.
	c := &v1alpha1.ClusterEffectivePolicy{Targets: []v1alpha1.Target{{Policies: []v1alpha1.TargetPolicy{{
		Group: "auth.example.com", Kind: "AuthPolicy",
		Effective: []v1alpha1.EffectiveSpec{{
			Spec:         runtime.RawExtension{Raw: []byte(`{"apiKey":{"v":1}}`)},
			FieldSources: map[string]string{"/apiKey/v": "global"},
		}},
	}}}}}
	got := accesstest.Decoded(t, red.Redact(context.Background(), &user.DefaultInfo{Name: "carol"}, encoded.MustNew(c))).(*v1alpha1.ClusterEffectivePolicy)
	var v map[string]interface{}
	if err := json.Unmarshal(got.Targets[0].Policies[0].Effective[0].Spec.Raw, &v); err != nil || fmt.Sprint(v) != "map[apiKey:map[v:<redacted>]]" {
		t.Errorf("cluster: %s %v", got.Targets[0].Policies[0].Effective[0].Spec.Raw, err)
	}
	if last := authz.Checks()[len(authz.Checks())-1]; last != "carol get auth.example.com/authpolicies " {
		t.Errorf("cluster-scoped decision: %q", last)
	}
}

// Escaped pointers (~1 for "/", ~0 for "~") and list-map items (leaves
// /list/<index>/<field>) are redacted where they point.
func TestRedactEscapesAndListItems(t *testing.T) {
	gk := schema.GroupKind{Group: "auth.example.com", Kind: "AuthPolicy"}
	idx := accesstest.SensitiveFields{gk: {Resource: accesstest.AuthGR, Paths: []string{"/a~1b", "/c~0d", "/keys"}}}
	red := access.NewRedactor(&accesstest.PolicyAuthorizer{}, idx, time.Minute)
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
	got := accesstest.Decoded(t, red.Redact(context.Background(), &user.DefaultInfo{Name: "carol"}, encoded.MustNew(obj))).(*v1alpha1.ClusterEffectivePolicy)
	want := `{"a/b":"<redacted>","c~d":"<redacted>","keys":[{"name":"<redacted>","value":"<redacted>"},{"name":"<redacted>","value":"<redacted>"}],"plain":true}`
	if s := accesstest.Text(got.Targets[0].Policies[0].Effective[0].Spec.Raw); s != want {
		t.Errorf("got  %s\nwant %s", s, want)
	}
}

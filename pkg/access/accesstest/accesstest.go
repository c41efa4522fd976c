// Package accesstest holds the fixtures that the tests of pkg/access and of
// the REST layer above it share: authorizers that allow a chosen few, a
// policy kind with sensitive fields, and an EffectivePolicy whose effective
// spec mixes values from two namespaces. One copy, so that the Redactor's
// own tests and the REST layer's tests about redaction describe the same
// case.
package accesstest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/access"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
)

// AuthGR is the resource of the fixture's policy kind with sensitive fields.
var AuthGR = schema.GroupResource{Group: "auth.example.com", Resource: "authpolicies"}

// SensitiveFields answers access.SensitiveFields from a map.
type SensitiveFields map[schema.GroupKind]access.SensitiveKind

// SensitiveKind implements access.SensitiveFields.
func (f SensitiveFields) SensitiveKind(gk schema.GroupKind) (access.SensitiveKind, bool) {
	sk, ok := f[gk]
	return sk, ok
}

// Sensitive makes AuthPolicy's /oidc/clientSecret, /apiKey and /hosts/0
// sensitive.
var Sensitive = SensitiveFields{
	{Group: "auth.example.com", Kind: "AuthPolicy"}: {Resource: AuthGR, Paths: []string{"/oidc/clientSecret", "/apiKey", "/hosts/0"}},
}

// PolicyAuthorizer allows "get" on authpolicies to the users listed per
// namespace (Allow: namespace -> user -> allowed), and records each check.
type PolicyAuthorizer struct {
	mu     sync.Mutex
	Allow  map[string]map[string]bool
	checks []string
}

// Authorize implements authorizer.Authorizer.
func (a *PolicyAuthorizer) Authorize(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.checks = append(a.checks, fmt.Sprintf("%s %s %s/%s %s", attrs.GetUser().GetName(), attrs.GetVerb(), attrs.GetAPIGroup(), attrs.GetResource(), attrs.GetNamespace()))
	if attrs.GetVerb() == "get" && attrs.GetAPIGroup() == AuthGR.Group && attrs.GetResource() == AuthGR.Resource &&
		attrs.IsResourceRequest() && a.Allow[attrs.GetNamespace()][attrs.GetUser().GetName()] {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// SetAllow replaces who is allowed (a revoked access, say).
func (a *PolicyAuthorizer) SetAllow(allow map[string]map[string]bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.Allow = allow
}

// Checks returns the checks made so far, "user verb group/resource namespace"
// each.
func (a *PolicyAuthorizer) Checks() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.checks...)
}

// EffectivePolicyAuthorizer allows get effectivepolicies in the namespaces
// listed and get clustereffectivepolicies when Cluster is set, and counts
// the checks.
type EffectivePolicyAuthorizer struct {
	Namespaces map[string]bool
	Cluster    bool
	Checks     int
}

// Authorize implements authorizer.Authorizer.
func (a *EffectivePolicyAuthorizer) Authorize(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	a.Checks++
	if attrs.GetVerb() != "get" || attrs.GetAPIGroup() != "effectivepolicy.dev" || !attrs.IsResourceRequest() {
		return authorizer.DecisionNoOpinion, "", nil
	}
	switch attrs.GetResource() {
	case "effectivepolicies":
		if a.Namespaces[attrs.GetNamespace()] {
			return authorizer.DecisionAllow, "", nil
		}
	case "clustereffectivepolicies":
		if a.Cluster {
			return authorizer.DecisionAllow, "", nil
		}
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// The fixture's AuthPolicy spec seen by a caller who may read both
// namespaces, and by one who may read neither.
const (
	AllVisible = `{"apiKey":"k-123","hosts":["a.example.com","b.example.com"],"oidc":{"clientID":"id","clientSecret":"s3cr3t"},"timeout":"5s"}`
	NoneAtAll  = `{"apiKey":"<redacted>","hosts":"<redacted>","oidc":{"clientID":"id","clientSecret":"<redacted>"},"timeout":"5s"}`
)

// Object is one target with an AuthPolicy effective entry whose secret
// comes from ns-a/secret-pol and whose apiKey from ns-b/key-pol, and a
// ColorPolicy (no sensitive fields) with a field of the same name.
func Object(ns, name string) *v1alpha1.EffectivePolicy {
	return &v1alpha1.EffectivePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Targets: []v1alpha1.Target{{
			Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Name: name,
			Policies: []v1alpha1.TargetPolicy{
				{
					Group: "auth.example.com", Kind: "AuthPolicy",
					Effective: []v1alpha1.EffectiveSpec{{
						Spec: runtime.RawExtension{Raw: []byte(AllVisible)},
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

// Specs returns the AuthPolicy and ColorPolicy specs of an Object as the
// REST layer or the Redactor handed it out.
func Specs(t *testing.T, obj runtime.Object) (auth, color string) {
	t.Helper()
	p := Decoded(t, obj).(*v1alpha1.EffectivePolicy)
	tps := p.Targets[0].Policies
	return Text(tps[0].Effective[0].Spec.Raw), Text(tps[1].Effective[0].Spec.Raw)
}

// Decoded returns an object the REST layer or the Redactor handed out (an
// *encoded.Object) as its typed object.
func Decoded(t *testing.T, obj runtime.Object) runtime.Object {
	t.Helper()
	dec, err := obj.(*encoded.Object).Decode()
	if err != nil {
		t.Fatal(err)
	}
	return dec
}

// Text is a raw spec without json.Marshal's HTML-safe escapes, which the
// encoded form keeps (and the API serves): "\u003credacted\u003e" is
// "<redacted>".
func Text(raw []byte) string {
	return strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(raw))
}

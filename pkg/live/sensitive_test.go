package live

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/access"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
)

// The live layer exposes the engine's sensitive-field index to the REST
// layer.
func TestSensitiveFieldsIndex(t *testing.T) {
	gk := schema.GroupKind{Group: "example.com", Kind: "RetryPolicy"}
	e, err := compute.NewEngine(compute.Options{Descriptors: []compute.Descriptor{{
		Group: gk.Group, Kind: gk.Kind, Class: "Inherited",
		TargetRef: []string{"spec.targetRef"}, SensitiveFields: []string{"/token"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	e.Upsert(crd("example.com", "RetryPolicy", "retrypolicies", false))
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds())
	o := NewOptions()
	o.CacheDir = ""
	l, err := NewWithEngine(o, e, client)
	if err != nil {
		t.Fatal(err)
	}
	sk, ok := l.SensitiveFields().SensitiveKind(gk)
	if !ok || sk.Resource != (schema.GroupResource{Group: "example.com", Resource: "retrypolicies"}) || len(sk.Paths) != 1 || sk.Paths[0] != "/token" {
		t.Fatalf("SensitiveKind = %+v, %v", sk, ok)
	}
	if _, ok := l.SensitiveFields().SensitiveKind(schema.GroupKind{Group: "x", Kind: "Y"}); ok {
		t.Fatal("unknown kind is sensitive")
	}
	// An engine that declares no sensitive field: nothing is sensitive.
	l2, err := NewWithEngine(o, newFakeEngine(), client)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := l2.SensitiveFields().SensitiveKind(gk); ok {
		t.Fatal("fake engine has sensitive kinds")
	}
}

// The engine's real output (fieldSources "namespace/name", pointers into the
// spec proper) is what the REST layer's redactor reads.
func TestSensitiveFieldsRedactEngineOutput(t *testing.T) {
	gk := schema.GroupKind{Group: "example.com", Kind: "RetryPolicy"}
	e, err := compute.NewEngine(compute.Options{Descriptors: []compute.Descriptor{{
		Group: gk.Group, Kind: gk.Kind, Class: "Inherited",
		TargetRef: []string{"spec.targetRef"}, SensitiveFields: []string{"/auth/token"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	e.Upsert(crd("example.com", "RetryPolicy", "retrypolicies", false))
	e.Upsert(route("app", "rt"))
	p := policy("app", "p", "rt", "3")
	p.Object["spec"].(map[string]interface{})["auth"] = map[string]interface{}{"token": "s3cr3t", "user": "u"}
	e.Upsert(p)
	obj, ok := e.Compute(compute.Key{Namespace: "app", Name: "rt"})
	if !ok {
		t.Fatal("no output")
	}
	o := NewOptions()
	o.CacheDir = ""
	l, err := NewWithEngine(o, e,
		dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds()))
	if err != nil {
		t.Fatal(err)
	}
	authz := authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		if a.GetUser().GetName() == "alice" && a.GetNamespace() == "app" && a.GetResource() == "retrypolicies" && a.GetAPIGroup() == "example.com" {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "", nil
	})
	red := access.NewRedactor(authz, l.SensitiveFields(), time.Minute)
	spec := func(o *encoded.Object) string {
		dec, err := o.Decode()
		if err != nil {
			t.Fatal(err)
		}
		// Encoded specs are HTML-safe, as json.Marshal writes them (and the
		// API serves them): "\u003credacted\u003e". Compare the text.
		return htmlUnescaper.Replace(string(dec.(*v1alpha1.EffectivePolicy).Targets[0].Policies[0].Effective[0].Spec.Raw))
	}
	enc := encoded.MustNew(obj) // the form the live layer stores and the REST layer serves
	if got := spec(red.Redact(context.Background(), &user.DefaultInfo{Name: "alice"}, enc)); got != `{"auth":{"token":"s3cr3t","user":"u"},"value":"3"}` {
		t.Errorf("alice sees %s", got)
	}
	if got := spec(red.Redact(context.Background(), &user.DefaultInfo{Name: "bob"}, enc)); got != `{"auth":{"token":"<redacted>","user":"u"},"value":"3"}` {
		t.Errorf("bob sees %s", got)
	}
}

// htmlUnescaper undoes json.Marshal's HTML-safe escapes.
var htmlUnescaper = strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&")

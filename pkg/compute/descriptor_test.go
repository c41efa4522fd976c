package compute

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

const sensitiveDescriptors = `
apiVersion: effectivepolicy.dev/v1alpha1
kind: PolicyDescriptorList
descriptors:
- group: auth.example.com
  kind: AuthPolicy
  class: Inherited
  targetRefs: [spec.targetRefs]
  sensitiveFields: [/oidc/clientSecret, /apiKey, /a~1b]
`

func TestLoadDescriptorsSensitiveFields(t *testing.T) {
	ds, err := LoadDescriptors([]byte(sensitiveDescriptors))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ds[0].SensitiveFields, " "); got != "/oidc/clientSecret /apiKey /a~1b" {
		t.Fatalf("sensitiveFields %q", got)
	}
	for _, bad := range []string{`""`, "oidc/clientSecret", "spec.oidc", "/a~2", "/a~"} {
		data := strings.Replace(sensitiveDescriptors, "[/oidc/clientSecret, /apiKey, /a~1b]", "["+bad+"]", 1)
		if _, err := LoadDescriptors([]byte(data)); err == nil || !strings.Contains(err.Error(), "descriptors[0]") {
			t.Errorf("sensitiveFields %s: error %v, want one naming descriptors[0]", bad, err)
		}
	}
}

func TestEngineSensitiveKind(t *testing.T) {
	ds, err := LoadDescriptors([]byte(sensitiveDescriptors))
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(Options{Descriptors: ds})
	if err != nil {
		t.Fatal(err)
	}
	gk := schema.GroupKind{Group: "auth.example.com", Kind: "AuthPolicy"}
	if _, ok := e.SensitiveKind(gk); ok {
		t.Fatal("sensitive kind without its CRD")
	}
	for _, o := range parseDocs(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: authpolicies.auth.example.com}
spec: {group: auth.example.com, scope: Namespaced, names: {kind: AuthPolicy, plural: authpolicies}, versions: [{name: v1, served: true, storage: true}]}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: colorpolicies.x.example.com, labels: {gateway.networking.k8s.io/policy: inherited}}
spec: {group: x.example.com, scope: Namespaced, names: {kind: ColorPolicy, plural: colorpolicies}, versions: [{name: v1, served: true, storage: true}]}
`) {
		e.Upsert(o)
	}
	sk, ok := e.SensitiveKind(gk)
	if !ok || sk.Resource != (schema.GroupResource{Group: "auth.example.com", Resource: "authpolicies"}) || !sk.Namespaced ||
		strings.Join(sk.Paths, " ") != "/oidc/clientSecret /apiKey /a~1b" {
		t.Fatalf("SensitiveKind = %+v, %v", sk, ok)
	}
	sk.Paths[0] = "/changed" // a copy
	if sk2, _ := e.SensitiveKind(gk); sk2.Paths[0] != "/oidc/clientSecret" {
		t.Fatal("SensitiveKind shares its paths")
	}
	if _, ok := e.SensitiveKind(schema.GroupKind{Group: "x.example.com", Kind: "ColorPolicy"}); ok {
		t.Fatal("a label-only kind has no sensitive fields")
	}
}

// TestLoadDescriptorsAnnotations: a descriptor's annotations must be annotation keys.
func TestLoadDescriptorsAnnotations(t *testing.T) {
	for _, tc := range []struct {
		list string
		ok   bool
	}{
		{"[kgateway.dev/policy-weight, weight]", true},
		{`[""]`, false},
		{"[a/b/c]", false},
		{"[-bad]", false},
	} {
		data := strings.Replace(sensitiveDescriptors, "  sensitiveFields:", "  annotations: "+tc.list+"\n  sensitiveFields:", 1)
		ds, err := LoadDescriptors([]byte(data))
		if tc.ok && (err != nil || len(ds[0].Annotations) != 2) {
			t.Errorf("annotations %s: %v, %v", tc.list, ds, err)
		}
		if !tc.ok && (err == nil || !strings.Contains(err.Error(), "descriptors[0]")) {
			t.Errorf("annotations %s: error %v, want one naming descriptors[0]", tc.list, err)
		}
	}
}

// TestSensitiveKindWithoutTheLock: SensitiveKind, asked by every GET, answers
// while the engine's write lock is held (a review holds it for up to
// --review-timeout), and follows the policy kinds as CRDs come and go.
func TestSensitiveKindWithoutTheLock(t *testing.T) {
	ds, err := LoadDescriptors([]byte(sensitiveDescriptors))
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(Options{Descriptors: ds})
	if err != nil {
		t.Fatal(err)
	}
	gk := schema.GroupKind{Group: "auth.example.com", Kind: "AuthPolicy"}
	crd := parseDocs(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: authpolicies.auth.example.com}
spec: {group: auth.example.com, scope: Namespaced, names: {kind: AuthPolicy, plural: authpolicies}, versions: [{name: v1, served: true, storage: true}]}
`)[0]
	crdGK := schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
	for _, step := range []struct {
		name string
		do   func()
		want bool
	}{
		{"before the CRD", func() {}, false},
		{"the CRD upserted", func() { e.Upsert(crd) }, true},
		{"the CRD deleted", func() { e.Delete(crdGK, "", crd.GetName()) }, false},
		{"the CRD back", func() { e.Upsert(crd) }, true},
	} {
		step.do()
		answered := make(chan bool)
		e.mu.Lock() // as a review holds it
		go func() {
			_, ok := e.SensitiveKind(gk)
			answered <- ok
		}()
		select {
		case ok := <-answered:
			if ok != step.want {
				t.Errorf("%s: sensitive %v, want %v", step.name, ok, step.want)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s: SensitiveKind waited for the engine's write lock", step.name)
		}
		e.mu.Unlock()
	}
}

package requesttrace

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/compute"
)

// parseYAML splits a multi-document YAML into objects.
func parseYAML(t testing.TB, docs string) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewBufferString(docs), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]interface{}
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatal(err)
		}
		if len(m) > 0 {
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
}

func readFile(t testing.TB, parts ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(parts...))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// newEngine feeds docs to a new engine, stamping objects one second apart
// in order (an object's own creationTimestamp wins).
func newEngine(t testing.TB, docs ...string) *compute.Engine {
	t.Helper()
	e, err := compute.NewEngine(compute.Options{})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	i := 0
	for _, d := range docs {
		for _, u := range parseYAML(t, d) {
			if ts := u.GetCreationTimestamp(); ts.IsZero() {
				u.SetCreationTimestamp(metav1.NewTime(base.Add(time.Duration(i) * time.Second)))
			}
			i++
			e.Upsert(u)
		}
	}
	return e
}

// everything is a Caller that sees every namespace and reads outputs
// straight from the engine.
func everything(e *compute.Engine) Caller {
	return Caller{Effective: effectiveFrom(e)}
}

func effectiveFrom(e *compute.Engine) func(ns, name string) []v1alpha1.Target {
	return func(ns, name string) []v1alpha1.Target {
		obj, ok := e.Compute(compute.Key{Namespace: ns, Name: name})
		if !ok {
			return nil
		}
		return obj.(*v1alpha1.EffectivePolicy).Targets
	}
}

func mustTrace(t *testing.T, e *compute.Engine, spec v1alpha1.RequestTraceSpec, c Caller) v1alpha1.RequestTraceStatus {
	t.Helper()
	s, err := Trace(e, spec, c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func gw(ns, name string) *v1alpha1.GatewayReference {
	return &v1alpha1.GatewayReference{Namespace: ns, Name: name}
}

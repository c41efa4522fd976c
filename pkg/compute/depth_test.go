package compute

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// TestDeepSpecInvalid: a policy nested more than MaxSpecDepth levels is
// Invalid, so that no output nests close to the 10,000 levels Kubernetes
// JSON decoders accept (found by test/badinput: a spec nested 9,995 levels
// made the EffectivePolicy undecodable for every client).
func TestDeepSpecInvalid(t *testing.T) {
	nested := func(levels int, list bool) interface{} {
		var v interface{} = int64(1)
		for i := 0; i < levels; i++ {
			if list {
				v = []interface{}{v}
			} else {
				v = map[string]interface{}{"a": v}
			}
		}
		return v
	}
	for _, tc := range []struct {
		name    string
		deep    interface{}
		invalid bool
	}{
		// spec is level 1, its field "deep" holds the rest.
		{"objects at the limit", nested(MaxSpecDepth-1, false), false},
		{"lists at the limit", nested(MaxSpecDepth-1, true), false},
		{"objects one level more", nested(MaxSpecDepth, false), true},
		{"lists one level more", nested(MaxSpecDepth, true), true},
		{"9,995 levels", nested(9995, false), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := worldObjs(t, baseTopology, `
apiVersion: example.com/v1
kind: RetryPolicy
metadata: {name: deep, namespace: appns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: rt}]
`)
			for _, o := range objs {
				if o.GetName() == "deep" {
					_ = unstructured.SetNestedField(o.Object, tc.deep, "spec", "deep")
				}
			}
			got, err := ComputeAll(objs, Options{})
			if err != nil {
				t.Fatal(err)
			}
			tp := effAt(t, got, Key{"appns", "rt"}, "HTTPRoute", retryK)
			o, msg := sourceOutcome(tp, "appns/deep", "*")
			if tc.invalid {
				if o != v1alpha1.OutcomeInvalid || !strings.Contains(msg, "nested more than 1000 levels") {
					t.Fatalf("outcome %s %q, want Invalid", o, msg)
				}
				return
			}
			if o == v1alpha1.OutcomeInvalid {
				t.Fatalf("Invalid at the limit: %s", msg)
			}
			// The output decodes with the standard decoder.
			data, err := json.Marshal(got[Key{"appns", "rt"}])
			if err != nil {
				t.Fatal(err)
			}
			var v interface{}
			if err := json.Unmarshal(data, &v); err != nil {
				t.Fatalf("output does not decode: %v", err)
			}
		})
	}
}

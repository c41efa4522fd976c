package live

import (
	"encoding/json"
	"reflect"
	"testing"

	kruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// effective is the first effective entry of a decoded test output.
func effective(obj kruntime.Object) *v1alpha1.EffectiveSpec {
	return &obj.(*v1alpha1.EffectivePolicy).Targets[0].Policies[0].Effective[0]
}

// TestInternSharesEqualContent: outputs decoded from the cache share equal
// raw specs and field-source maps, keep distinct ones apart, and encode
// exactly as before interning.
func TestInternSharesEqualContent(t *testing.T) {
	doc := func(name, spec, fs string) []byte {
		return []byte(`{"apiVersion":"effectivepolicy.dev/v1alpha1","kind":"EffectivePolicy","metadata":{"name":"` + name + `","namespace":"ns","resourceVersion":"5"},` +
			`"targets":[{"group":"gateway.networking.k8s.io","kind":"HTTPRoute","name":"` + name + `","policies":[{"group":"example.com","kind":"RetryPolicy","class":"Inherited",` +
			`"sources":[{"namespace":"ns","name":"p","attachedTo":{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"gw"},"stanza":"defaults","mergeStrategy":"patch","outcome":"Enforced"}],` +
			`"effective":[{"via":[{"group":"gateway.networking.k8s.io","kind":"Gateway","name":"gw"}],"spec":` + spec + `,"fieldSources":` + fs + `}]}]}]}`)
	}
	for _, tc := range []struct {
		name              string
		a, b              []byte
		sameRaw, sameMaps bool
	}{
		{"equal content", doc("r1", `{"retries":3}`, `{"/retries":"ns/p"}`), doc("r2", `{"retries":3}`, `{"/retries":"ns/p"}`), true, true},
		{"other spec", doc("r1", `{"retries":3}`, `{"/retries":"ns/p"}`), doc("r2", `{"retries":4}`, `{"/retries":"ns/p"}`), false, true},
		{"other sources", doc("r1", `{"retries":3}`, `{"/retries":"ns/p"}`), doc("r2", `{"retries":3}`, `{"/retries":"ns/q"}`), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := newInterner()
			a, err := decodeOutput(ResourceEffectivePolicies, tc.a)
			if err != nil {
				t.Fatal(err)
			}
			b, err := decodeOutput(ResourceEffectivePolicies, tc.b)
			if err != nil {
				t.Fatal(err)
			}
			in.output(a)
			in.output(b)
			ea := effective(a)
			eb := effective(b)
			if got := &ea.Spec.Raw[0] == &eb.Spec.Raw[0]; got != tc.sameRaw {
				t.Errorf("raw shared = %v, want %v", got, tc.sameRaw)
			}
			if got := reflect.ValueOf(ea.FieldSources).UnsafePointer() == reflect.ValueOf(eb.FieldSources).UnsafePointer(); got != tc.sameMaps {
				t.Errorf("fieldSources shared = %v, want %v", got, tc.sameMaps)
			}
			for _, x := range []struct {
				obj  interface{}
				want []byte
			}{{a, tc.a}, {b, tc.b}} {
				got, _ := json.Marshal(x.obj)
				var g, w interface{}
				_ = json.Unmarshal(got, &g)
				_ = json.Unmarshal(x.want, &w)
				if !reflect.DeepEqual(g, w) {
					t.Errorf("interning changed the object:\n%s\nwant\n%s", got, x.want)
				}
			}
		})
	}
}

package encoded

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/randfill"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// The hand-written writers (targets.go for the targets, appendJSON and
// List.CacheEncode around them) must write what encoding/json writes for the
// API types, field for field. The tests below fill every exported field of
// those types at random, as apimachinery's round-trip tests do, and compare:
// a field added to types.go and not to the writers is written by
// json.Marshal and missing here, and fails them.

// filler fills the API types: every field, with random strings (now and
// then an awkward one), random JSON specs and ObjectMeta limited to what
// the server sets (its encoding is json.Marshal's on both sides).
func filler(seed int64) *randfill.Filler {
	awkward := []string{"", `quo"te`, `back\slash`, "<html> & more", "tab\tnew\nline", "line\u2028sep", "\x01ctl", "bad\xffutf8", "ünïcödé"}
	return randfill.New().RandSource(rand.NewSource(seed)).NilChance(0.2).NumElements(0, 3).Funcs(
		func(s *string, c randfill.Continue) {
			if c.Intn(8) == 0 {
				*s = awkward[c.Intn(len(awkward))]
				return
			}
			*s = c.String(0)
		},
		func(re *runtime.RawExtension, c randfill.Continue) {
			switch c.Intn(10) {
			case 0: // no spec: "null"
			case 1:
				re.Object = &v1alpha1.EffectivePolicy{ObjectMeta: metav1.ObjectMeta{Name: c.String(0)}}
			default:
				re.Raw = randomJSON(c)
			}
		},
		func(m *metav1.ObjectMeta, c randfill.Continue) {
			*m = metav1.ObjectMeta{Name: c.String(0), Namespace: c.String(0), UID: types.UID(c.String(0)),
				ResourceVersion: fmt.Sprint(c.Uint64() >> 1), CreationTimestamp: metav1.Unix(c.Int63n(1<<33), 0)}
			c.Fill(&m.Labels)
			c.Fill(&m.Annotations)
		},
		func(m *metav1.ListMeta, c randfill.Continue) {
			m.ResourceVersion, m.Continue = fmt.Sprint(c.Uint64()>>1), c.String(0)
			c.Fill(&m.RemainingItemCount)
		},
	)
}

// randomJSON is a random JSON document in one of the forms a raw spec can
// have: compact (as the engine writes it), indented, or with HTML
// characters and non-ASCII text left unescaped.
func randomJSON(c randfill.Continue) []byte {
	var value func(depth int) any
	value = func(depth int) any {
		switch k := c.Intn(7); {
		case depth > 2 || k == 0:
			return c.String(0)
		case k == 1:
			return c.Int63n(1<<53) - 1<<52
		case k == 2:
			return c.Float64() * 1e6
		case k == 3:
			return c.Intn(2) == 0
		case k == 4:
			return nil
		case k == 5:
			l := make([]any, c.Intn(4))
			for i := range l {
				l[i] = value(depth + 1)
			}
			return l
		default:
			m := map[string]any{}
			for i := c.Intn(4); i > 0; i-- {
				m[c.String(0)] = value(depth + 1)
			}
			return m
		}
	}
	doc := map[string]any{}
	for i := c.Intn(4); i > 0; i-- {
		doc[c.String(0)] = value(0)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	switch c.Intn(3) {
	case 1:
		enc.SetIndent("", "  ")
	case 2:
		enc.SetEscapeHTML(false)
	}
	if err := enc.Encode(doc); err != nil {
		panic(err) // cannot happen for these values
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}

// TestAppendTargetsWritesEveryField: random targets, every field of
// Target, TargetPolicy, PolicySource, ObjectReference and EffectiveSpec set
// (or not), through the hand-written writer and json.Marshal.
func TestAppendTargetsWritesEveryField(t *testing.T) {
	f := filler(1)
	for i := 0; i < 3000; i++ {
		var targets []v1alpha1.Target
		f.Fill(&targets)
		if targets == nil {
			continue // New never encodes nil targets; json.Marshal writes null
		}
		want, wantErr := json.Marshal(targets)
		got, err := appendTargets(nil, targets)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("case %d: error %v, json.Marshal's %v", i, err, wantErr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("case %d: the hand-written writer and json.Marshal differ (a field of the API types the writer does not know?):\n got %s\nwant %s", i, got, want)
		}
	}
}

// TestObjectsWriteEveryField: random objects of the four kinds, every field
// of the types filled, encoded: their JSON is the typed object's, and their
// decoded form writes it again.
func TestObjectsWriteEveryField(t *testing.T) {
	f := filler(2)
	kinds := []func() runtime.Object{
		func() runtime.Object { return &v1alpha1.EffectivePolicy{} },
		func() runtime.Object { return &v1alpha1.ClusterEffectivePolicy{} },
		func() runtime.Object { return &v1alpha1.PolicyReach{} },
		func() runtime.Object { return &v1alpha1.ClusterPolicyReach{} },
	}
	for i := 0; i < 500; i++ {
		newObj := kinds[i%len(kinds)]
		obj, roundTrip := newObj(), newObj()
		f.Fill(obj)
		kind := reflect.TypeOf(obj).Elem().Name()
		obj.GetObjectKind().SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(kind))
		want, wantErr := json.Marshal(obj)
		o, err := New(obj)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("case %d: New: %v, json.Marshal: %v", i, err, wantErr)
		}
		if err != nil {
			continue
		}
		got, err := o.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("case %d: an Object writes other JSON than its typed object (a field the encoded form drops?):\n got %s\nwant %s", i, got, want)
		}
		// Decoding loses nothing either. Compared after a JSON round trip
		// of each side, which replaces invalid UTF-8 by U+FFFD the same way
		// (the decoded targets went through JSON, its metadata did not).
		dec, err := o.Decode()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := canonical(t, dec, roundTrip.DeepCopyObject()), canonical(t, obj, roundTrip); !bytes.Equal(got, want) {
			t.Fatalf("case %d: the decoded object writes other JSON:\n got %s\nwant %s", i, got, want)
		}
	}
}

// canonical is the JSON of obj after a JSON round trip through into, a
// fresh object of obj's type.
func canonical(t *testing.T, obj, into runtime.Object) []byte {
	t.Helper()
	data, err := json.Marshal(obj)
	if err == nil {
		err = json.Unmarshal(data, into)
	}
	if err == nil {
		data, err = json.Marshal(into)
	}
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestListsWriteEveryField: random lists of both kinds through the API
// server's plain JSON encoder, as an encoded List and as the typed list.
func TestListsWriteEveryField(t *testing.T) {
	enc := encoders(t)["json"]
	f := filler(3)
	for i := 0; i < 100; i++ {
		var typed runtime.Object
		l := &List{}
		if i%2 == 1 {
			l.Kind = KindClusterEffectivePolicy
			var cl v1alpha1.ClusterEffectivePolicyList
			f.Fill(&cl)
			if cl.Items == nil {
				cl.Items = []v1alpha1.ClusterEffectivePolicy{} // the API server serves [] for an empty list, never null
			}
			l.ListMeta = cl.ListMeta
			for j := range cl.Items {
				cl.Items[j].TypeMeta = metav1.TypeMeta{} // items of a typed list carry none
				l.Items = append(l.Items, mustNew(t, &cl.Items[j]))
			}
			typed = &cl
		} else {
			var el v1alpha1.EffectivePolicyList
			f.Fill(&el)
			if el.Items == nil {
				el.Items = []v1alpha1.EffectivePolicy{}
			}
			l.ListMeta = el.ListMeta
			for j := range el.Items {
				el.Items[j].TypeMeta = metav1.TypeMeta{}
				l.Items = append(l.Items, mustNew(t, &el.Items[j]))
			}
			typed = &el
		}
		want, err := runtime.Encode(enc, typed)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := enc.Encode(l, &got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("case %d: an encoded List writes other JSON than the typed list:\n got %.2000s\nwant %.2000s", i, got.Bytes(), want)
		}
	}
}

package versioned

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
	"github.com/effectivepolicy-dev/effectivepolicy/pkg/encoded"
)

// withSpec is an object with one effective entry holding raw and fieldSources fs.
func withSpec(ns, name, raw string, fs map[string]string) *v1alpha1.EffectivePolicy {
	o := obj(ns, name, "K")
	o.Targets[0].Policies = []v1alpha1.TargetPolicy{{Kind: "P", Effective: []v1alpha1.EffectiveSpec{{
		Spec: runtime.RawExtension{Raw: []byte(raw)}, FieldSources: fs,
	}}}}
	return o
}

// TestSameContent: the content comparison Apply uses to drop no-op puts. A
// restored object (compact JSON, nil empty maps) must equal the computed one,
// and a real difference must not be hidden.
func TestSameContent(t *testing.T) {
	base := withSpec("a", "x", `{"a":1,"b":[1,2]}`, map[string]string{"/a": "a/p"})
	for _, tc := range []struct {
		name string
		b    runtime.Object
		want bool
	}{
		{"identical", withSpec("a", "x", `{"a":1,"b":[1,2]}`, map[string]string{"/a": "a/p"}), true},
		{"white space in raw", withSpec("a", "x", "{ \"a\": 1,\n \"b\": [1, 2] }", map[string]string{"/a": "a/p"}), true},
		{"metadata only", func() runtime.Object {
			o := withSpec("a", "x", `{"a":1,"b":[1,2]}`, map[string]string{"/a": "a/p"})
			o.ResourceVersion, o.UID, o.CreationTimestamp = "7", "u", metav1.Now()
			o.Kind = "EffectivePolicy"
			return o
		}(), true},
		{"other value", withSpec("a", "x", `{"a":2,"b":[1,2]}`, map[string]string{"/a": "a/p"}), false},
		{"other order of keys", withSpec("a", "x", `{"b":[1,2],"a":1}`, map[string]string{"/a": "a/p"}), false},
		{"other field source", withSpec("a", "x", `{"a":1,"b":[1,2]}`, map[string]string{"/a": "a/q"}), false},
		{"invalid raw", withSpec("a", "x", `{"a":1,"b":[1,2]`, map[string]string{"/a": "a/p"}), false},
		{"other label", func() runtime.Object {
			o := withSpec("a", "x", `{"a":1,"b":[1,2]}`, map[string]string{"/a": "a/p"})
			o.Labels = map[string]string{"l": "v"}
			return o
		}(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sameContent(base, tc.b); got != tc.want {
				t.Errorf("sameContent = %v, want %v", got, tc.want)
			}
		})
	}
	empty, nilMap := withSpec("a", "x", `{}`, map[string]string{}), withSpec("a", "x", `{}`, nil)
	if !sameContent(empty, nilMap) {
		t.Error("an empty and a nil fieldSources map differ; a restored object would be MODIFIED")
	}
}

// TestApplyDoesNotModifyInputs: the store keeps shallow copies; setting
// their metadata must leave the caller's objects (shared with the engine)
// as they were, and a later change must not show through an earlier event.
func TestApplyDoesNotModifyInputs(t *testing.T) {
	s := newStore(true, 0)
	in := withSpec("a", "x", `{"a":1}`, map[string]string{"/a": "a/p"})
	_, applied := s.Apply([]change{{Namespace: "a", Name: "x", Object: in}})
	if in.ResourceVersion != "" || in.UID != "" || !in.CreationTimestamp.IsZero() {
		t.Fatalf("Apply set metadata on its input: %+v", in.ObjectMeta)
	}
	if om(applied[0]).ResourceVersion != ats(1) {
		t.Fatalf("stored rv %q", om(applied[0]).ResourceVersion)
	}
	in2 := withSpec("a", "x", `{"a":2}`, nil)
	s.Apply([]change{{Namespace: "a", Name: "x", Object: in2}, del("a", "gone")})
	if om(applied[0]).ResourceVersion != ats(1) || string(applied[0].Targets[0].Policies[0].Effective[0].Spec.Raw) != `{"a":1}` {
		t.Errorf("the first stored object changed: %+v", applied[0])
	}
	_, deleted := s.Apply([]change{del("a", "x")})
	if om(deleted[0]).ResourceVersion != ats(3) {
		t.Errorf("delete carries rv %q", om(deleted[0]).ResourceVersion)
	}
	if in2.ResourceVersion != "" {
		t.Errorf("delete set metadata on the object put before: %q", in2.ResourceVersion)
	}
}

// TestSortedIndex: after random puts and deletes (several per Apply, some of
// missing keys, some no-ops) List returns exactly the stored keys in order,
// for all namespaces and per namespace, as after a Restore.
func TestSortedIndex(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(1))
	s := newStore(true, 0)
	want := map[string]bool{}
	nss := []string{"a", "ab", "b", "a-b"}
	for round := 0; round < 200; round++ {
		var changes []change
		for i := rng.Intn(6); i >= 0; i-- {
			ns, name := nss[rng.Intn(len(nss))], fmt.Sprintf("o%d", rng.Intn(20))
			if rng.Intn(3) == 0 {
				changes = append(changes, del(ns, name))
				delete(want, ns+"/"+name)
			} else {
				changes = append(changes, put(ns, name, fmt.Sprint("K", rng.Intn(2))))
				want[ns+"/"+name] = true
			}
		}
		s.Apply(changes)
		check := func(st *testStore, what string) {
			for _, ns := range append([]string{""}, nss...) {
				var exp []string
				for k := range want {
					if ns == "" || k[:len(ns)+1] == ns+"/" {
						exp = append(exp, k)
					}
				}
				sort.Strings(exp)
				objs, _, _ := st.List(ctx, ns)
				var got []string
				for _, o := range objs {
					got = append(got, om(o).Namespace+"/"+om(o).Name)
				}
				if fmt.Sprint(got) != fmt.Sprint(exp) {
					t.Fatalf("round %d %s List(%q) = %v, want %v", round, what, ns, got, exp)
				}
			}
		}
		check(s, "after Apply")
		if round%50 == 0 {
			objs, rv := s.Snapshot()
			r := newStore(true, 0)
			r.Restore(objs, testEpoch, rv)
			check(r, "after Restore")
		}
	}
}

// TestSameContentEncoded: the same comparison on encoded outputs (what the
// live layer stores): metadata set by the store does not count, an output
// read back from its cache form equals the one computed afresh, and a real
// difference counts.
func TestSameContentEncoded(t *testing.T) {
	enc := func(o *v1alpha1.EffectivePolicy) *encoded.Object {
		t.Helper()
		e, err := encoded.New(o)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	base := enc(withSpec("a", "x", `{"a":1}`, map[string]string{"/a": "a/p"}))
	restored := func() runtime.Object {
		o := enc(withSpec("a", "x", `{"a":1}`, map[string]string{"/a": "a/p"}))
		o.ResourceVersion, o.UID, o.CreationTimestamp = "9", "u", metav1.Now()
		data, err := o.CacheBytes()
		if err != nil {
			t.Fatal(err)
		}
		back, err := encoded.FromCacheBytes(data)
		if err != nil {
			t.Fatal(err)
		}
		return back
	}()
	for _, tc := range []struct {
		name string
		b    runtime.Object
		want bool
	}{
		{"identical", enc(withSpec("a", "x", `{"a":1}`, map[string]string{"/a": "a/p"})), true},
		{"restored from the cache, with its own metadata", restored, true},
		{"other value", enc(withSpec("a", "x", `{"a":2}`, map[string]string{"/a": "a/p"})), false},
		{"other field source", enc(withSpec("a", "x", `{"a":1}`, map[string]string{"/a": "a/q"})), false},
		{"other label", func() runtime.Object {
			o := withSpec("a", "x", `{"a":1}`, map[string]string{"/a": "a/p"})
			o.Labels = map[string]string{"l": "v"}
			return enc(o)
		}(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sameContent(base, tc.b); got != tc.want {
				t.Errorf("sameContent = %v, want %v", got, tc.want)
			}
		})
	}
}

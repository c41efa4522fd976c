package encoded

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

func codecs(t testing.TB) serializer.CodecFactory {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	return serializer.NewCodecFactory(scheme)
}

// encoders returns the API server's encoders for the media types it serves,
// by name: the versioning codec to v1alpha1 over each serializer.
func encoders(t testing.TB) map[string]runtime.Encoder {
	t.Helper()
	cf := codecs(t)
	out := map[string]runtime.Encoder{}
	for _, info := range cf.SupportedMediaTypes() {
		switch info.MediaType {
		case "application/json":
			out["json"] = cf.EncoderForVersion(info.Serializer, v1alpha1.SchemeGroupVersion)
			out["json-pretty"] = cf.EncoderForVersion(info.PrettySerializer, v1alpha1.SchemeGroupVersion)
		case "application/yaml":
			out["yaml"] = cf.EncoderForVersion(info.Serializer, v1alpha1.SchemeGroupVersion)
		}
	}
	if len(out) != 3 {
		t.Fatalf("encoders: got %v", out)
	}
	return out
}

func policy(name string, nTargets int) *v1alpha1.EffectivePolicy {
	ep := &v1alpha1.EffectivePolicy{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: "ns", ResourceVersion: "42", UID: "u-1",
		CreationTimestamp: metav1.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC),
	}}
	for i := 0; i < nTargets; i++ {
		ep.Targets = append(ep.Targets, v1alpha1.Target{
			Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Name: name,
			Policies: []v1alpha1.TargetPolicy{{
				Group: "example.com", Kind: "RetryPolicy", Class: v1alpha1.ClassInherited,
				Sources: []v1alpha1.PolicySource{{Namespace: "ns", Name: fmt.Sprintf("p-%d", i), Outcome: v1alpha1.OutcomeEnforced, Message: "<in effect> & \"quoted\""}},
				Effective: []v1alpha1.EffectiveSpec{{
					Via:          []v1alpha1.ObjectReference{{Kind: "Namespace", Name: "ns"}},
					Spec:         runtime.RawExtension{Raw: []byte(fmt.Sprintf(`{"retries":%d,"html":"<&>"}`, i))},
					FieldSources: map[string]string{"/retries": "ns/p", "/html": "ns/p"},
				}},
			}},
		})
	}
	return ep
}

func mustNew(t testing.TB, obj runtime.Object) *Object {
	t.Helper()
	o, err := New(obj)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestObjectEncodesLikeTheDecodedObject: through every encoder the API
// server uses, an Object gives the bytes of its decoded object.
func TestObjectEncodesLikeTheDecodedObject(t *testing.T) {
	cluster := &v1alpha1.ClusterEffectivePolicy{ObjectMeta: metav1.ObjectMeta{Name: "gc", ResourceVersion: "7", Labels: map[string]string{"a": "b"}}}
	cluster.Targets = policy("gc", 2).Targets
	for name, enc := range encoders(t) {
		for _, tc := range []struct {
			name string
			obj  runtime.Object
		}{
			{"no targets", policy("a", 0)},
			{"one target", policy("b", 1)},
			{"many targets", policy("c", 40)},
			{"cluster-scoped", cluster},
		} {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				want, err := runtime.Encode(enc, tc.obj.DeepCopyObject())
				if err != nil {
					t.Fatal(err)
				}
				o := mustNew(t, tc.obj)
				got, err := runtime.Encode(enc, o)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("encoded differently:\n got %s\nwant %s", got, want)
				}
				if name == "json" && classify(enc.Identifier()).kind != plainJSON {
					t.Errorf("the plain JSON encoder %s is not recognized", enc.Identifier())
				}
				if name != "json" && classify(enc.Identifier()).kind == plainJSON {
					t.Errorf("encoder %s taken for plain JSON", enc.Identifier())
				}
				if name == "json-pretty" && classify(enc.Identifier()).kind != prettyJSON {
					t.Errorf("the pretty JSON encoder %s is not recognized", enc.Identifier())
				}
				mj, err := o.MarshalJSON()
				if err != nil {
					t.Fatal(err)
				}
				if name == "json" && !bytes.Equal(append(mj, '\n'), want) {
					t.Errorf("MarshalJSON:\n got %s\nwant %s", mj, want)
				}
			})
		}
	}
}

// recorder records the size of every write.
type recorder struct {
	bytes.Buffer
	writes []int
}

func (r *recorder) Write(p []byte) (int, error) {
	r.writes = append(r.writes, len(p))
	return r.Buffer.Write(p)
}

func TestListEncodesLikeTheDecodedList(t *testing.T) {
	for name, enc := range encoders(t) {
		for _, n := range []int{0, 1, 3, chunkItems + 1, 3*chunkItems + 7} {
			t.Run(fmt.Sprintf("%s/%d items", name, n), func(t *testing.T) {
				l := &List{ListMeta: metav1.ListMeta{ResourceVersion: "99"}}
				for i := 0; i < n; i++ {
					l.Items = append(l.Items, mustNew(t, policy(fmt.Sprintf("p%04d", i), 1+i%3)))
				}
				want, err := runtime.Encode(enc, l.GetObject())
				if err != nil {
					t.Fatal(err)
				}
				rec := &recorder{}
				if err := enc.Encode(l, rec); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(rec.Bytes(), want) {
					t.Fatalf("encoded differently (%d vs %d bytes):\n got %.300s\nwant %.300s", rec.Len(), len(want), rec.Bytes(), want)
				}
				// The API server gzips a response only when its first write
				// is larger than 128 KiB.
				if name == "json" && len(want) > gzipThreshold && rec.writes[0] <= gzipThreshold {
					t.Errorf("first write %d bytes of %d: the response would not be gzipped", rec.writes[0], len(want))
				}
			})
		}
	}
}

func TestClusterList(t *testing.T) {
	enc := encoders(t)["json"]
	c := &v1alpha1.ClusterEffectivePolicy{ObjectMeta: metav1.ObjectMeta{Name: "gc"}, Targets: policy("gc", 1).Targets}
	l := &List{Kind: KindClusterEffectivePolicy, ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: []*Object{mustNew(t, c)}}
	want, err := runtime.Encode(enc, l.GetObject())
	if err != nil {
		t.Fatal(err)
	}
	got, err := runtime.Encode(enc, l)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) || !strings.Contains(string(got), `"kind":"ClusterEffectivePolicyList"`) {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

// TestWrappingEncoder: an encoder identified as the watch encoder gets the
// Object itself, so that its embedded encoder takes the fast path; any other
// unknown encoder gets the decoded object.
func TestWrappingEncoder(t *testing.T) {
	o := mustNew(t, policy("w", 2))
	for _, tc := range []struct {
		id      string
		wantObj bool
	}{
		{`{"embeddedEncoder":"x","encoder":"y","eventType":"ADDED","name":"watch"}`, true},
		{`{"name":"protobuf"}`, false},
		{`not json`, false},
	} {
		var got runtime.Object
		err := o.CacheEncode(runtime.Identifier(tc.id), func(obj runtime.Object, _ io.Writer) error { got = obj; return nil }, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		_, isObject := got.(*Object)
		if isObject != tc.wantObj {
			t.Errorf("%s: encode got %T", tc.id, got)
		}
	}
}

func TestCacheBytesRoundTrip(t *testing.T) {
	for _, obj := range []runtime.Object{policy("a", 0), policy("b", 5), &v1alpha1.ClusterEffectivePolicy{ObjectMeta: metav1.ObjectMeta{Name: "c"}}} {
		o := mustNew(t, obj)
		data, err := o.CacheBytes()
		if err != nil {
			t.Fatal(err)
		}
		back, err := FromCacheBytes(data)
		if err != nil {
			t.Fatal(err)
		}
		if !Equal(o, back) {
			t.Errorf("round trip changed %s: %+v vs %+v", o.Name, back, o)
		}
	}
}

func TestFromCacheBytesRejectsDamage(t *testing.T) {
	good, err := mustNew(t, policy("a", 3)).CacheBytes()
	if err != nil {
		t.Fatal(err)
	}
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)-10] ^= 0xff
	for name, data := range map[string][]byte{
		"empty":            nil,
		"length too large": {0xff, 0x01, '{'},
		"header not json":  append([]byte{3}, "abc"...),
		"truncated":        good[:len(good)-5],
		"bit flip":         flipped,
		"garbage targets":  append(append([]byte(nil), good[:len(good)-40]...), bytes.Repeat([]byte{7}, 40)...),
	} {
		if _, err := FromCacheBytes(data); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestEqual(t *testing.T) {
	a := mustNew(t, policy("a", 2))
	if !Equal(a, mustNew(t, policy("a", 2))) {
		t.Error("the same output encoded twice differs")
	}
	b := mustNew(t, policy("a", 2))
	b.ResourceVersion = "43"
	if Equal(a, b) {
		t.Error("another resourceVersion is equal")
	}
	c := policy("a", 2)
	c.Targets[1].Policies[0].Sources[0].Name = "changed"
	if Equal(a, mustNew(t, c)) {
		t.Error("a changed source is equal")
	}
	d := policy("a", 2)
	d.Labels = map[string]string{"x": "y"}
	if Equal(a, mustNew(t, d)) {
		t.Error("a label is equal")
	}
}

func TestSummarize(t *testing.T) {
	ep := policy("a", 3)
	ep.Targets = append(ep.Targets, v1alpha1.Target{Kind: "Service", Name: "a", Policies: []v1alpha1.TargetPolicy{{Group: "b.example", Kind: "AuthPolicy", Sources: []v1alpha1.PolicySource{{Namespace: "ns", Name: "p-0"}}}}})
	s := Summarize(ep.Targets)
	if s.TargetKinds != "HTTPRoute,Service" || s.Policies != 4 || s.PolicyKinds != "AuthPolicy,RetryPolicy" || len(s.PolicyGroupKinds) != 2 || s.PolicyGroupKinds[0].Group != "b.example" {
		t.Errorf("got %+v", s)
	}
}

// BenchmarkListEncode: a LIST of 2,000 outputs of ~40 targets through the
// plain JSON encoder (what the API server does per LIST, before gzip).
func BenchmarkListEncode(b *testing.B) {
	enc := encoders(b)["json"]
	l := &List{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	for i := 0; i < 2000; i++ {
		l.Items = append(l.Items, mustNew(b, policy(fmt.Sprintf("p%05d", i), 10+i%30)))
	}
	n, _ := io.Copy(io.Discard, bytes.NewReader(nil))
	var size int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := &countWriter{}
		if err := enc.Encode(l, c); err != nil {
			b.Fatal(err)
		}
		size = c.n + n
	}
	b.SetBytes(size)
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// TestWatchEventEncodesLikeTheAPIServer: for the API server's watch encoder
// over plain JSON, an Object writes the event bytes the server would write
// for its decoded object (a metav1.WatchEvent around the embedded encoding).
func TestWatchEventEncodesLikeTheAPIServer(t *testing.T) {
	enc := encoders(t)["json"]
	// The shape of the API server's watchEncoderIdentifier (handlers/response.go).
	type watchID struct {
		Name            string `json:"name,omitempty"`
		EmbeddedEncoder string `json:"embeddedEncoder,omitempty"`
		Encoder         string `json:"encoder,omitempty"`
		EventType       string `json:"eventType,omitempty"`
	}
	for _, typ := range []string{"ADDED", "MODIFIED", "DELETED"} {
		id, err := json.Marshal(watchID{Name: "watch", EmbeddedEncoder: string(enc.Identifier()), Encoder: string(enc.Identifier()), EventType: typ})
		if err != nil {
			t.Fatal(err)
		}
		o := mustNew(t, policy("w", 3))
		embedded, err := runtime.Encode(enc, o.GetObject())
		if err != nil {
			t.Fatal(err)
		}
		want, err := runtime.Encode(enc, &metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: embedded}})
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		called := false
		if err := o.CacheEncode(runtime.Identifier(id), func(runtime.Object, io.Writer) error { called = true; return nil }, &got); err != nil {
			t.Fatal(err)
		}
		if called || !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s (fallback called: %v):\n got %s\nwant %s", typ, called, got.Bytes(), want)
		}
	}
}

// TestAppendTargetsMatchesJSONMarshal: the hand-written encoder writes what
// json.Marshal writes, on ordinary and on awkward content.
func TestAppendTargetsMatchesJSONMarshal(t *testing.T) {
	awkward := []string{"", "plain", `quo"te`, `back\slash`, "<html> & more", "tab\tnew\nline", "ünïcödé", "line\u2028sep", "\x01ctl", "bad\xffutf8"}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func() string { return awkward[rng.IntN(len(awkward))] }
	raws := [][]byte{
		[]byte(`{"a":1}`), []byte(`{"a": 1}`), []byte(`{"h":"<&>"}`), []byte("{\"u\":\"\u2028\"}"), []byte(`[1,2]`),
		[]byte(`{}`), []byte(` {"lead":true}`), []byte("{\"n\":\"é\"}"),
	}
	cases := [][]v1alpha1.Target{nil, {}, policy("a", 3).Targets}
	for n := 0; n < 300; n++ {
		var ts []v1alpha1.Target
		for i := rng.IntN(3); i >= 0; i-- {
			tg := v1alpha1.Target{Group: pick(), Kind: pick(), Name: pick()}
			for j := rng.IntN(3); j > 0; j-- {
				tp := v1alpha1.TargetPolicy{Group: pick(), Kind: pick(), Class: v1alpha1.PolicyClass(pick())}
				for k := rng.IntN(3); k > 0; k-- {
					tp.Sources = append(tp.Sources, v1alpha1.PolicySource{Namespace: pick(), Name: pick(), Message: pick(),
						AttachedTo: v1alpha1.ObjectReference{Group: pick(), Kind: pick(), Name: pick(), Namespace: pick(), SectionName: pick()}})
				}
				for k := rng.IntN(3); k > 0; k-- {
					e := v1alpha1.EffectiveSpec{SectionName: pick()}
					switch rng.IntN(4) {
					case 0: // nil via
					case 1:
						e.Via = []v1alpha1.ObjectReference{}
					default:
						e.Via = []v1alpha1.ObjectReference{{Kind: pick(), Name: pick()}, {Kind: pick(), Name: pick(), SectionName: pick()}}
					}
					switch rng.IntN(5) {
					case 0: // no spec at all: "null"
					case 1:
						e.Spec.Object = &v1alpha1.EffectivePolicy{ObjectMeta: metav1.ObjectMeta{Name: pick()}}
					default:
						e.Spec.Raw = raws[rng.IntN(len(raws))]
					}
					if rng.IntN(2) == 0 {
						e.FieldSources = map[string]string{}
						for l := rng.IntN(4); l > 0; l-- {
							e.FieldSources[pick()+"/"+pick()] = pick()
						}
					}
					tp.Effective = append(tp.Effective, e)
				}
				if rng.IntN(4) == 0 {
					tp.Sources, tp.Effective = []v1alpha1.PolicySource{}, nil
				}
				tg.Policies = append(tg.Policies, tp)
			}
			ts = append(ts, tg)
		}
		cases = append(cases, ts)
	}
	for i, ts := range cases {
		want, wantErr := json.Marshal(ts)
		got, err := appendTargets(nil, ts)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("case %d: error %v, json.Marshal's %v", i, err, wantErr)
		}
		if ts == nil {
			continue // New never encodes nil targets; json.Marshal writes null
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("case %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// BenchmarkNew: encoding one output of 40 targets (JSON and compression),
// as the live layer does for every changed output.
func BenchmarkNew(b *testing.B) {
	ep := policy("p", 40)
	for i := range ep.Targets { // plain content, as the engine's usually is
		tp := &ep.Targets[i].Policies[0]
		tp.Sources[0].Message = "established policy; in effect"
		tp.Effective[0].Spec.Raw = []byte(fmt.Sprintf(`{"retries":%d,"backoff":"1s"}`, i))
	}
	data, _ := json.Marshal(ep.Targets)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := New(ep); err != nil {
			b.Fatal(err)
		}
	}
}

// TestIndenterMatchesJSONIndent: fed in pieces of any size, the indenter
// writes what json.Indent(dst, src, "", "  ") writes.
func TestIndenterMatchesJSONIndent(t *testing.T) {
	docs := []string{
		`{}`, `[]`, `{"a":[]}`, `{"a":{},"b":[{},[]]}`, `[1,2,{"x":null}]`,
		`{"s":"a,b:{c}[d]\"e\\"}`, `{"u":"\u003c\u2028","n":-1.5e3,"t":true}`,
	}
	for _, n := range []int{1, 7, 500} {
		l := &List{ListMeta: metav1.ListMeta{ResourceVersion: "3"}}
		for i := 0; i < n%50; i++ {
			l.Items = append(l.Items, mustNew(t, policy(fmt.Sprintf("p%d", i), i%4)))
		}
		b, err := json.Marshal(l.GetObject())
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	for _, doc := range docs {
		var want bytes.Buffer
		if err := json.Indent(&want, []byte(doc), "", "  "); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		for _, piece := range []int{1, 2, 3, 16, len(doc)} {
			in := &indenter{}
			var got []byte
			for i := 0; i < len(doc); i += piece {
				got = in.write(got, []byte(doc[i:min(i+piece, len(doc))]))
			}
			if string(got) != want.String() {
				t.Fatalf("pieces of %d:\n got %s\nwant %s", piece, got, want.String())
			}
		}
	}
}

// TestNewKeepsOnlyTheCompressedBytes: an Object holds no more memory than
// its compressed targets (s2.Encode returns a slice of a buffer larger than
// the input; keeping that buffer held ~600 MB at the large benchmark size (scale 1)).
func TestNewKeepsOnlyTheCompressedBytes(t *testing.T) {
	for _, n := range []int{1, 10, 100} {
		o := mustNew(t, policy("p", n))
		if cap(o.targets) != len(o.targets) {
			t.Errorf("%d targets: %d compressed bytes held in a buffer of %d", n, len(o.targets), cap(o.targets))
		}
	}
}

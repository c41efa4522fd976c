package compute

import (
	"errors"
	"reflect"
	"runtime"
	"testing"

	"sigs.k8s.io/json"
)

// decodeJSON decodes as the informers do (int64 for integers).
func decodeJSON(t testing.TB, doc string) map[string]interface{} {
	t.Helper()
	var m map[string]interface{}
	if err := json.UnmarshalCaseSensitivePreserveInts([]byte(doc), &m); err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	return m
}

func TestStoredSpecRoundTrip(t *testing.T) {
	for _, doc := range []string{
		`null`,
		`{}`,
		`{"hostnames":["a.example.com","*.example.com"],"parentRefs":[{"name":"gw","sectionName":"http","port":80}]}`,
		`{"rules":[{"matches":[{"path":{"type":"PathPrefix","value":"/"}}],"backendRefs":[{"name":"svc","port":8080,"weight":0}]}]}`,
		`{"n":null,"t":true,"f":false,"neg":-9007199254740993,"big":9223372036854775807,"pi":3.141592653589793,"e":1e300,"tiny":5e-324,"s":"ünïcode ✓\u0000"}`,
		`{"nested":{"deeper":[[],[{}],[[1,2,[3]]]],"empty":""}}`,
	} {
		spec := decodeJSON(t, doc)
		s, _ := keepSpec(nil, spec)
		if s.ref != nil {
			t.Errorf("%s: kept by reference, want encoded", doc)
		}
		got, err := s.decode()
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if !reflect.DeepEqual(got, spec) {
			t.Errorf("%s: decoded %#v, want %#v", doc, got, spec)
		}
	}
}

// A spec with a value JSON cannot hold (hand-built in tests) is kept as it
// is, and still fingerprinted apart from its JSON look-alike.
func TestStoredSpecHandBuilt(t *testing.T) {
	spec := map[string]interface{}{"port": 80}
	s, enc := keepSpec(nil, spec)
	if got, err := s.decode(); err != nil || !reflect.DeepEqual(got, spec) {
		t.Errorf("decoded %#v, %v; want the object's own spec", got, err)
	}
	var fpInt, fpInt64 fingerprint
	fpInt, _ = fingerprintOf(nil, enc, nil, nil)
	s64, _ := keepSpec(nil, map[string]interface{}{"port": int64(80)})
	fpInt64, _ = fingerprintOf(nil, s64.enc, nil, nil)
	if fpInt == fpInt64 {
		t.Error("int 80 and int64 80 share a fingerprint")
	}
}

func TestStoredSpecBadBytes(t *testing.T) {
	good, _ := keepSpec(nil, decodeJSON(t, `{"a":[1,"x",{"b":true}]}`))
	for name, b := range map[string][]byte{
		"empty":           {},
		"unknown tag":     {'?'},
		"not a map":       {'s', 1, 'x'},
		"truncated":       good.enc[:len(good.enc)-2],
		"trailing":        append(append([]byte(nil), good.enc...), 'n'),
		"huge length":     {'m', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
		"key not string":  {'m', 1, 'n', 'n'},
		"short float":     {'m', 1, 's', 1, 'k', 'f', 1, 2},
		"bad varint":      {'m', 1, 's', 1, 'k', 'i'},
		"string too long": {'m', 1, 's', 9, 'k'},
	} {
		if m, err := (storedSpec{enc: b}).decode(); err == nil {
			t.Errorf("%s: decoded %#v, want an error", name, m)
		}
	}
}

// Bad bytes nesting lists that each declare as many elements as there are
// bytes left cost memory in proportion to their length, not its square.
func TestStoredSpecDeepBadBytes(t *testing.T) {
	const levels = 4000
	var b []byte
	for i := 0; i < levels; i++ {
		b = append(b, 'l', 0, 0, 0)
	}
	// Each level's count is what is left (a three-byte varint), so every
	// one passes the bound, and its first element is the next level.
	for i := 0; i < levels; i++ {
		at := 4*i + 1
		rest := len(b) - at - 3
		b[at], b[at+1], b[at+2] = byte(rest&0x7f|0x80), byte(rest>>7&0x7f|0x80), byte(rest>>14)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := (storedSpec{enc: append([]byte{'m', 1, 's', 1, 'k'}, b...)}).decode()
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("decoded bytes that end inside a list")
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("decoding %d bytes allocated %d MB", len(b), got>>20)
	}
	// The nesting is read to its end: it is the length that fails.
	d := specDecoder{b: b}
	d.value()
	if !errors.Is(d.err, errSpecEncoding) || len(d.b) != 0 {
		t.Errorf("stopped with %d bytes left: %v", len(d.b), d.err)
	}
}

// FuzzStoredSpec: any JSON object the informers could decode comes back
// equal, and no bytes make the decoder panic.
func FuzzStoredSpec(f *testing.F) {
	f.Add([]byte(`{"rules":[{"matches":[{"path":{"type":"Exact","value":"/a"}}]}],"x":1.5,"y":-3}`))
	f.Add([]byte(`{"a":null,"b":[true,false,{}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = (storedSpec{enc: data}).decode()
		var spec map[string]interface{}
		if json.UnmarshalCaseSensitivePreserveInts(data, &spec) != nil {
			return
		}
		s, _ := keepSpec(nil, spec)
		got, err := s.decode()
		if err != nil || !reflect.DeepEqual(got, spec) {
			t.Fatalf("%s: decoded %#v, %v", data, got, err)
		}
	})
}

package encoded

import (
	"bytes"
	"testing"
)

// FuzzFromCacheBytes: whatever a cache file holds, decoding an entry never
// panics, and an entry that decodes serves valid JSON and writes back the
// same bytes.
func FuzzFromCacheBytes(f *testing.F) {
	for _, n := range []int{0, 1, 5} {
		data, err := mustNew(f, policy("p", n)).CacheBytes()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := FromCacheBytes(data)
		if err != nil {
			return
		}
		if _, err := o.Targets(); err != nil {
			// The CRC matched, so the bytes are what was written: but a
			// fuzzer can write a valid CRC over garbage. Decoding must fail
			// cleanly, as it did.
			return
		}
		back, err := o.CacheBytes()
		if err != nil {
			t.Fatal(err)
		}
		again, err := FromCacheBytes(back)
		if err != nil || !Equal(o, again) {
			t.Fatalf("round trip: %v", err)
		}
		if _, err := o.MarshalJSON(); err != nil && !bytes.Contains([]byte(err.Error()), []byte("decompressing")) {
			t.Fatalf("MarshalJSON: %v", err)
		}
	})
}

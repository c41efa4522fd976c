// Package jsontest compares JSON documents in tests: the engine's tests and
// its rooms' tests check specs by their canonical encoding, so that key
// order and white space never decide whether two documents are equal.
package jsontest

import (
	"encoding/json"
	"testing"
)

// Canonical re-encodes JSON (bytes, a json.RawMessage or any value that
// encodes) canonically: keys sorted, no white space. It fails the test when
// v is not JSON.
func Canonical(t testing.TB, v any) string {
	t.Helper()
	var b []byte
	switch x := v.(type) {
	case []byte:
		b = x
	case json.RawMessage:
		b = x
	default:
		var err error
		b, err = json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
	}
	var decoded any
	if err := json.Unmarshal(b, &decoded); err != nil {
		t.Fatalf("json %s: %v", b, err)
	}
	out, _ := json.Marshal(decoded)
	return string(out)
}

package jsontest

import (
	"encoding/json"
	"testing"
)

func TestCanonical(t *testing.T) {
	cases := []struct {
		name string
		in   any
		want string
	}{
		{"bytes, keys sorted and spaces dropped", []byte(`{ "b": 1, "a": [ 2, {"d": null, "c": true} ] }`), `{"a":[2,{"c":true,"d":null}],"b":1}`},
		{"a raw message", json.RawMessage(`{"z":"x","y":1.5}`), `{"y":1.5,"z":"x"}`},
		{"a value", map[string]any{"k": []string{"v"}}, `{"k":["v"]}`},
		{"a scalar", []byte(` "s" `), `"s"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Canonical(t, tc.in); got != tc.want {
				t.Errorf("Canonical(%v) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

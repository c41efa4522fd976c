package jsonpointer

import (
	"reflect"
	"strings"
	"testing"
)

func TestEscapeTokensRoundTrip(t *testing.T) {
	for _, tok := range []string{"", "a", "a/b", "~", "~1", "~0", "/~", "a~/b~~//c", "ü/ñ"} {
		p := "/" + Escape(tok) + "/" + Escape(tok)
		if !Valid(p) {
			t.Errorf("Valid(%q) = false for escaped token %q", p, tok)
		}
		if got := Tokens(p); !reflect.DeepEqual(got, []string{tok, tok}) {
			t.Errorf("Tokens(%q) = %q, want [%q %q]", p, got, tok, tok)
		}
	}
}

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{"a": "a", "a/b": "a~1b", "~": "~0", "~/": "~0~1", "~1": "~01"} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValid(t *testing.T) {
	for _, tc := range []struct {
		p    string
		want bool
	}{
		{"", false}, {"a", false}, {"a/b", false},
		{"/", true}, {"/a", true}, {"/a/b", true}, {"/a~0b", true}, {"/a~1b", true}, {"//", true},
		{"/a~", false}, {"/a~2", false}, {"/~x/b", false}, {"/" + strings.Repeat("~0", 100), true},
	} {
		if got := Valid(tc.p); got != tc.want {
			t.Errorf("Valid(%q) = %v, want %v", tc.p, got, tc.want)
		}
	}
}

func TestTokens(t *testing.T) {
	for _, tc := range []struct {
		p    string
		want []string
	}{
		{"", nil},
		{"/", []string{""}},
		{"/a/b", []string{"a", "b"}},
		{"/a~1b/~0", []string{"a/b", "~"}},
		{"/~01", []string{"~1"}},
		{"/0/items", []string{"0", "items"}},
	} {
		if got := Tokens(tc.p); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Tokens(%q) = %q, want %q", tc.p, got, tc.want)
		}
	}
}

// Package jsonpointer holds the RFC 6901 JSON pointer rules the project
// needs in one place: the engine writes pointers (fieldSources keys),
// descriptors declare them (sensitiveFields) and the REST layer follows them
// (redaction). "~0" and "~1" are the only escapes, for "~" and "/".
package jsonpointer

import "strings"

// Escape escapes one reference token ("a/b" -> "a~1b", "~" -> "~0").
func Escape(token string) string {
	if !strings.ContainsAny(token, "~/") {
		return token
	}
	return strings.ReplaceAll(strings.ReplaceAll(token, "~", "~0"), "/", "~1")
}

// Valid reports whether p is a non-empty pointer: it starts with "/" and
// every "~" is followed by "0" or "1".
func Valid(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '~' && (i+1 == len(p) || (p[i+1] != '0' && p[i+1] != '1')) {
			return false
		}
	}
	return true
}

// Tokens splits a non-empty pointer into its unescaped reference tokens
// ("/a~1b/c" -> ["a/b", "c"]). It does not validate: use Valid first.
func Tokens(p string) []string {
	if p == "" {
		return nil
	}
	toks := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, tok := range toks {
		// "~1" first: "~01" is the token "~1", not "/".
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
	}
	return toks
}

package requestmatch

import "testing"

func TestNormalizeHost(t *testing.T) {
	for in, want := range map[string]string{
		"Foo.Example.com":      "foo.example.com",
		"foo.example.com:8443": "foo.example.com",
		"foo.example.com.":     "foo.example.com",
		"[::1]:80":             "::1",
		"":                     "",
		" spaced.com ":         "spaced.com",
	} {
		if got := normalizeHost(in); got != want {
			t.Errorf("normalizeHost(%q) = %q, want %q", in, got, want)
		}
	}
}

// Source: the PathPrefix definition in apis/v1/httproute_types.go: "/abc"
// matches "/abc", "/abc/" and "/abc/def" but not "/abcd"; a trailing "/" on
// the prefix is ignored; Exact "/abc" matches neither "/abc/" nor "/Abc".
func TestMatchPath(t *testing.T) {
	for _, tc := range []struct {
		m    *HTTPPathMatch
		path string
		want bool
	}{
		{nil, "/anything", true},
		{&HTTPPathMatch{}, "/", true},
		{prefix("/abc"), "/abc", true},
		{prefix("/abc"), "/abc/", true},
		{prefix("/abc"), "/abc/def", true},
		{prefix("/abc"), "/abcd", false},
		{prefix("/abc/"), "/abc", true},
		{prefix("/abc/"), "/abcd", false},
		{prefix("/"), "/x", true},
		{exact("/abc"), "/abc", true},
		{exact("/abc"), "/abc/", false},
		{exact("/abc"), "/Abc", false},
		{exact("/abc"), "/abcd", false},
		{regex("/abc/[0-9]+"), "/abc/12", true},
		{regex("/abc/[0-9]+"), "/abc/12/x", false},
	} {
		got, _, _, err := matchPath(tc.m, tc.path)
		if err != nil || got != tc.want {
			t.Errorf("matchPath(%+v, %q) = %v, %v; want %v", tc.m, tc.path, got, err, tc.want)
		}
	}
}

func TestRouteServesHost(t *testing.T) {
	cases := []struct {
		hostnames []string
		host      string
		want      bool
	}{
		{nil, "anything.example.com", true},
		{[]string{"foo.example.com"}, "FOO.example.com:8080", true},
		{[]string{"*.example.com"}, "a.b.example.com.", true},
		{[]string{"*.example.com"}, "example.com", false},
		{[]string{"bar.example.com", "foo.example.com"}, "baz.example.com", false},
	}
	for _, tc := range cases {
		if got := RouteServesHost(tc.hostnames, tc.host); got != tc.want {
			t.Errorf("RouteServesHost(%v, %q) = %v, want %v", tc.hostnames, tc.host, got, tc.want)
		}
	}
}

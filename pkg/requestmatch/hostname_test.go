package requestmatch

import "testing"

// Source: HTTPRouteSpec.Hostnames in apis/v1/httproute_types.go ("a match
// for *.example.com would match both test.example.com, and
// foo.test.example.com, but not example.com") and the listener examples of
// the same paragraph.
func TestHostnameMatches(t *testing.T) {
	for _, tc := range []struct {
		pattern, host string
		want          bool
	}{
		{"", "anything.example.com", true},
		{"", "", true},
		{"*.example.com", "test.example.com", true},
		{"*.example.com", "foo.test.example.com", true},
		{"*.example.com", "example.com", false},
		{"*.example.com", "test.example.net", false},
		{"*.example.com", "xexample.com", false},
		{"*.example.com", "", false},
		{"test.example.com", "test.example.com", true},
		{"test.example.com", "TEST.example.COM", true},
		{"test.example.com", "foo.test.example.com", false},
		{"*", "a", true},
	} {
		if got := HostnameMatches(tc.pattern, tc.host); got != tc.want {
			t.Errorf("HostnameMatches(%q, %q) = %v, want %v", tc.pattern, tc.host, got, tc.want)
		}
	}
}

// Source: the listener/route examples of HTTPRouteSpec.Hostnames in
// apis/v1/httproute_types.go; the intersection is the more specific name.
func TestIntersect(t *testing.T) {
	for _, tc := range []struct {
		listener, route, want string
		ok                    bool
	}{
		{"test.example.com", "", "test.example.com", true},
		{"test.example.com", "test.example.com", "test.example.com", true},
		{"test.example.com", "*.example.com", "test.example.com", true},
		{"test.example.com", "example.com", "", false},
		{"*.example.com", "", "*.example.com", true},
		{"*.example.com", "*.example.com", "*.example.com", true},
		{"*.example.com", "test.example.com", "test.example.com", true},
		{"*.example.com", "foo.test.example.com", "foo.test.example.com", true},
		{"*.example.com", "*.foo.example.com", "*.foo.example.com", true},
		{"*.foo.example.com", "*.example.com", "*.foo.example.com", true},
		{"*.example.com", "example.com", "", false},
		{"*.example.com", "test.example.net", "", false},
		{"", "*.example.com", "*.example.com", true},
	} {
		got, ok := intersect(tc.listener, tc.route)
		if got != tc.want || ok != tc.ok {
			t.Errorf("intersect(%q, %q) = %q, %v; want %q, %v", tc.listener, tc.route, got, ok, tc.want, tc.ok)
		}
	}
}

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

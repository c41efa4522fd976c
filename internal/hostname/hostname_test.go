package hostname

import "testing"

// Source: HTTPRouteSpec.Hostnames in apis/v1/httproute_types.go ("a match
// for *.example.com would match both test.example.com, and
// foo.test.example.com, but not example.com") and the listener examples of
// the same paragraph.
func TestMatches(t *testing.T) {
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
		if got := Matches(tc.pattern, tc.host); got != tc.want {
			t.Errorf("Matches(%q, %q) = %v, want %v", tc.pattern, tc.host, got, tc.want)
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
		// Not a valid hostname (the CRDs' pattern rejects it): no name in
		// common, where the attachment rule once said there was one.
		{"*.example.com", ".example.com", "", false},
	} {
		got, ok := Intersect(tc.listener, tc.route)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Intersect(%q, %q) = %q, %v; want %q, %v", tc.listener, tc.route, got, ok, tc.want, tc.ok)
		}
	}
}

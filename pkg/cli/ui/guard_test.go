package ui

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestGuard: what a browser (or anything else) may ask of the server that
// reads the cluster with the user's credentials.
func TestGuard(t *testing.T) {
	const token, port = "the-token", "4242"
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	g := newGuard(token, port, ok)
	cases := []struct {
		name    string
		method  string
		host    string
		path    string
		headers map[string]string
		want    int
	}{
		{name: "page without token", method: "GET", host: "127.0.0.1:4242", path: "/", want: 200},
		{name: "api with token", method: "GET", host: "127.0.0.1:4242", path: "/api/graph", headers: map[string]string{TokenHeader: token}, want: 200},
		{name: "localhost with token", method: "GET", host: "localhost:4242", path: "/api/graph", headers: map[string]string{TokenHeader: token}, want: 200},
		{name: "same origin", method: "GET", host: "127.0.0.1:4242", path: "/api/graph", headers: map[string]string{TokenHeader: token, "Origin": "http://127.0.0.1:4242", "Sec-Fetch-Site": "same-origin"}, want: 200},
		{name: "head", method: "HEAD", host: "127.0.0.1:4242", path: "/", want: 200},
		{name: "api without token", method: "GET", host: "127.0.0.1:4242", path: "/api/graph", want: 401},
		{name: "api with a wrong token", method: "GET", host: "127.0.0.1:4242", path: "/api/graph", headers: map[string]string{TokenHeader: "the-token2"}, want: 401},
		{name: "token in the query only", method: "GET", host: "127.0.0.1:4242", path: "/api/graph?token=the-token", want: 401},
		{name: "rebound DNS name", method: "GET", host: "attacker.example:4242", path: "/api/graph", headers: map[string]string{TokenHeader: token}, want: 403},
		{name: "wrong port in Host", method: "GET", host: "127.0.0.1:80", path: "/", want: 403},
		{name: "Host without port", method: "GET", host: "127.0.0.1", path: "/", want: 403},
		{name: "other origin", method: "GET", host: "127.0.0.1:4242", path: "/api/graph", headers: map[string]string{TokenHeader: token, "Origin": "http://attacker.example"}, want: 403},
		{name: "other port as origin", method: "GET", host: "127.0.0.1:4242", path: "/", headers: map[string]string{"Origin": "http://127.0.0.1:4243"}, want: 403},
		{name: "cross-site fetch", method: "GET", host: "127.0.0.1:4242", path: "/", headers: map[string]string{"Sec-Fetch-Site": "cross-site"}, want: 403},
		{name: "post", method: "POST", host: "127.0.0.1:4242", path: "/api/graph", headers: map[string]string{TokenHeader: token}, want: 405},
		{name: "delete", method: "DELETE", host: "127.0.0.1:4242", path: "/", want: 405},
		{name: "options", method: "OPTIONS", host: "127.0.0.1:4242", path: "/api/graph", want: 405},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "http://"+tc.host+tc.path, nil)
			r.Host = tc.host
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			g.ServeHTTP(w, r)
			if w.Code != tc.want {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.want, w.Body.String())
			}
			if w.Header().Get("Content-Security-Policy") == "" || w.Header().Get("X-Frame-Options") != "DENY" {
				t.Errorf("security headers missing: %v", w.Header())
			}
		})
	}
}

// TestNewListensOnLoopback: the server listens on 127.0.0.1 only, prints a
// URL with a token, and refuses a port out of range.
func TestNewListensOnLoopback(t *testing.T) {
	if _, err := New(Options{Port: 70000}); err == nil {
		t.Fatal("port 70000 accepted")
	}
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.listener.Close()
	if host := s.listener.Addr().String(); host[:10] != "127.0.0.1:" {
		t.Fatalf("listens on %s", host)
	}
	if len(s.token) < 32 {
		t.Fatalf("token %q too short", s.token)
	}
	other, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.listener.Close()
	if other.token == s.token {
		t.Fatal("two runs share a token")
	}
}

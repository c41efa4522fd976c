package ui

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"
)

// TokenHeader carries the per-run token on the page's requests.
const TokenHeader = "X-EffectivePolicy-Token"

// newToken returns a random token for one run of the server.
func newToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// guard is what stands between a browser and a server that reads the
// cluster with the user's credentials:
//   - read-only: GET and HEAD only, so no form or script of another site
//     can make it do anything; the one exception is POST to the Change
//     view's endpoint, whose review the API server answers and never
//     stores (and which, like every /api/ request, needs the token);
//   - the Host header must name the loopback address and port the server
//     listens on, so a DNS name rebound to 127.0.0.1 gets nothing (the
//     browser sends the attacker's name as Host);
//   - an Origin or Sec-Fetch-Site header, when the browser sends one, must
//     be this server's own;
//   - the data (/api/) needs the per-run token, which only the printed
//     URL carries, so another local user or program that finds the port
//     cannot read what the user may read.
//
// The page itself (embedded, no data) is served without the token.
type guard struct {
	token   string
	hosts   map[string]bool
	origins map[string]bool
	next    http.Handler
}

// newGuard guards next for a server listening on port of 127.0.0.1.
func newGuard(token, port string, next http.Handler) *guard {
	g := &guard{token: token, hosts: map[string]bool{}, origins: map[string]bool{}, next: next}
	for _, h := range []string{"127.0.0.1:" + port, "localhost:" + port} {
		g.hosts[h] = true
		g.origins["http://"+h] = true
	}
	return g
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	if r.Method != http.MethodGet && r.Method != http.MethodHead && (r.Method != http.MethodPost || r.URL.Path != changePath) {
		h.Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "read-only: only GET and HEAD are served")
		return
	}
	if !g.hosts[r.Host] {
		writeError(w, http.StatusForbidden, "unexpected Host header: open the URL that kubectl effectivepolicy ui printed")
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !g.origins[o] {
		writeError(w, http.StatusForbidden, "cross-origin request refused")
		return
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		writeError(w, http.StatusForbidden, "cross-site request refused")
		return
	}
	if strings.HasPrefix(r.URL.Path, "/api/") && !g.tokenOK(r.Header.Get(TokenHeader)) {
		writeError(w, http.StatusUnauthorized, "missing or wrong token: open the URL that kubectl effectivepolicy ui printed")
		return
	}
	g.next.ServeHTTP(w, r)
}

func (g *guard) tokenOK(got string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(g.token)) == 1
}

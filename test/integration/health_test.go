package integration

import (
	"net/http"
	"strings"
	"testing"
)

func TestHealthAndMetrics(t *testing.T) {
	ctx := ctxFor(t)
	rc := newClient(t).Discovery().RESTClient()
	get := func(path string) (int, string) {
		status := 0
		req := rc.Get()
		if p, ok := strings.CutSuffix(path, "?verbose"); ok {
			req = req.AbsPath(p).Param("verbose", "true")
		} else {
			req = req.AbsPath(path)
		}
		body, _ := req.Do(ctx).StatusCode(&status).Raw()
		return status, string(body)
	}
	if !postStartRan.Load() {
		t.Error("post-start hook did not run")
	}
	for _, tc := range []struct {
		name     string
		notReady bool
		path     string
		code     int
		contains string
	}{
		{"livez", false, "/livez", http.StatusOK, "ok"},
		{"readyz", false, "/readyz?verbose", http.StatusOK, "[+]test-gate ok"},
		{"readyz with a failing check", true, "/readyz?verbose", http.StatusInternalServerError, "[-]test-gate failed"},
		{"the check alone", true, "/readyz/test-gate", http.StatusInternalServerError, ""},
		{"livez ignores readiness", true, "/livez", http.StatusOK, "ok"},
		{"metrics", false, "/metrics", http.StatusOK, "apiserver_request_total"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			notReady.Store(tc.notReady)
			defer notReady.Store(false)
			code, body := get(tc.path)
			if code != tc.code || !strings.Contains(body, tc.contains) {
				t.Errorf("%s: %d %q", tc.path, code, truncate(body))
			}
		})
	}
}

func truncate(s string) string {
	if len(s) > 500 {
		return s[:500] + "..."
	}
	return s
}

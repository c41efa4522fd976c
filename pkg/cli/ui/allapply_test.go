package ui

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// TestTargetAllApplyInOrder: a kind whose policies all apply (Envoy Gateway's EnvoyPatchPolicy)
// is shown on a target's stack as the implementation's ordered list — priority, then age — with
// each step's policy, as the plugin's describe draws it (testdata/all-apply).
func TestTargetAllApplyInOrder(t *testing.T) {
	s := newTestServer(t, newSourceOf(t, "testdata/all-apply"), "")
	gw := url.Values{"group": {"gateway.networking.k8s.io"}, "kind": {"Gateway"}, "namespace": {"ex-eg-epp"}, "name": {"edge"}}
	code, body := get(t, s, "/api/target", gw)
	raw, _ := json.Marshal(body)
	if code != 200 {
		t.Fatalf("status %d: %s", code, raw)
	}
	text := string(raw)
	// Each step's line: its number and the policy it applies, in Envoy Gateway's order.
	steps := []string{
		`{"text":"1. applied 1st"},{"style":"source","text":"  ← ex-eg-epp/filters-timeout"}`,
		`{"text":"2. applied 2nd"},{"style":"source","text":"  ← ex-eg-epp/stat-prefix"}`,
		`{"text":"3. applied 3rd"},{"style":"source","text":"  ← ex-eg-epp/backlog-size"}`,
	}
	last := -1
	for _, step := range steps {
		at := strings.Index(text, step)
		if at < 0 {
			t.Fatalf("the stack lacks the step %s: %s", step, text)
		}
		if at < last {
			t.Errorf("the step %s comes before the one above it: %s", step, text)
		}
		last = at
	}
}

package ui

import (
	"encoding/json"
	"strings"
	"testing"
)

// cakeRoute is a route the demo does not have, under its Gateway: every
// policy reaching it would reach it for the first time.
const cakeRoute = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: cake, namespace: baker}
spec:
  parentRefs: [{name: cupcakes, namespace: infra}]
  hostnames: [cake.cupcakes.example]
  rules: [{backendRefs: [{name: baker, port: 8080}]}]
`

// TestChangeAfterGraph: the targets a change reaches for the first time
// come drawn as they would be (the page adds them to the graph, marked as
// new); a target the graph has already is not among them; with a focus,
// only what passes through the focused Gateway.
func TestChangeAfterGraph(t *testing.T) {
	s := newTestServer(t, newReviewSource(t), "")
	const cake = "gateway.networking.k8s.io/HTTPRoute/baker/cake"
	body := func(apply, gateway string) string {
		b, err := json.Marshal(ChangeRequest{Apply: apply, Gateway: gateway})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	cases := []struct {
		name   string
		body   string
		status int
		// drawn is the new target the after-graph must draw ("" none).
		drawn string
		// label is what its label says (the policies after the change).
		label []string
		error string
	}{
		{name: "a new route", body: body(cakeRoute, ""), status: 200, drawn: cake,
			label: []string{"HTTPRoute\nbaker/cake\n", "policies", "Enforced"}},
		{name: "a new route under the Gateway drawn", body: body(cakeRoute, "gateway.networking.k8s.io/Gateway/infra/cupcakes"), status: 200, drawn: cake,
			label: []string{"baker/cake"}},
		{name: "a new route under another Gateway than the one drawn", body: body(cakeRoute, "gateway.networking.k8s.io/Gateway/infra/elsewhere"), status: 200},
		{name: "a change to a target drawn already", body: body(demoFile(t, "proposed/baker-timeouts-5s.yaml"), ""), status: 200},
		{name: "a focus that is not a Gateway", body: body(cakeRoute, "gateway.networking.k8s.io/HTTPRoute/baker/baker"), status: 400, error: "is not a Gateway of the graph"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, raw := post(t, s, tc.body, nil)
			if code != tc.status {
				t.Fatalf("status %d, want %d: %s", code, tc.status, raw)
			}
			if tc.error != "" {
				if !strings.Contains(raw, tc.error) {
					t.Errorf("error lacks %q: %s", tc.error, raw)
				}
				return
			}
			var got ChangeAnswer
			if err := json.Unmarshal([]byte(raw), &got); err != nil {
				t.Fatal(err)
			}
			targets := map[string]Node{}
			for _, n := range got.After.Nodes {
				if n.Target {
					targets[n.ID] = n
				}
			}
			if tc.drawn == "" {
				if len(targets) != 0 {
					t.Errorf("after-graph draws %v, want no new target", targets)
				}
				return
			}
			n, ok := targets[tc.drawn]
			if !ok || len(targets) != 1 {
				t.Fatalf("after-graph targets %v, want %s alone", targets, tc.drawn)
			}
			for _, w := range tc.label {
				if !strings.Contains(n.Base, w) {
					t.Errorf("label %q lacks %q", n.Base, w)
				}
			}
			if stack, _ := json.Marshal(got.After.Stacks[tc.drawn]); len(got.After.Stacks) != 1 || !strings.Contains(string(stack), "TimeoutPolicy") {
				t.Errorf("the new target's stack after the change: %s", stack)
			}
			if n.Outcome == "none" || !hasEdgeTo(got.After.Graph, tc.drawn) {
				t.Errorf("new target %+v: want an outcome and an edge from its context", n)
			}
		})
	}
}

func hasEdgeTo(g Graph, id string) bool {
	for _, e := range g.Edges {
		if e.To == id {
			return true
		}
	}
	return false
}

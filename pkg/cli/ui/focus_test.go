package ui

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/render"
)

const demoGatewayID = "gateway.networking.k8s.io/Gateway/infra/cupcakes"

// TestGraphFocus: a focus on a Gateway draws the contexts through it and
// offers the Gateways; a small graph is drawn whole; a Gateway the graph
// does not have is a 404.
func TestGraphFocus(t *testing.T) {
	s := newTestServer(t, newDemoSource(t), "")
	cases := []struct {
		name      string
		params    url.Values
		status    int
		focus     string
		has, lack []string
	}{
		{name: "small graph whole", status: 200, has: []string{demoGatewayID, demoRouteID, "/Service/baker/baker"}},
		{name: "focus on the Gateway", params: url.Values{"gateway": {demoGatewayID}}, status: 200, focus: demoGatewayID,
			has: []string{demoGatewayID, demoRouteID}},
		{name: "unknown Gateway", params: url.Values{"gateway": {"gateway.networking.k8s.io/Gateway/infra/nothing"}}, status: 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body := get(t, s, "/api/graph", tc.params)
			raw, _ := json.Marshal(body)
			if code != tc.status {
				t.Fatalf("status %d, want %d: %s", code, tc.status, raw)
			}
			if code != 200 {
				return
			}
			var g Graph
			if err := json.Unmarshal(raw, &g); err != nil {
				t.Fatal(err)
			}
			if g.Focus != tc.focus {
				t.Errorf("focus %q, want %q", g.Focus, tc.focus)
			}
			if tc.focus != "" && (len(g.Gateways) != 1 || g.Gateways[0].ID != demoGatewayID || g.Gateways[0].Routes != 2 || !strings.Contains(g.Gateways[0].Label, "infra/cupcakes · 2 routes")) {
				t.Errorf("gateways: %+v", g.Gateways)
			}
			ids := map[string]bool{}
			for _, n := range g.Nodes {
				ids[n.ID] = true
			}
			for _, id := range tc.has {
				if !ids[id] {
					t.Errorf("no node %s", id)
				}
			}
		})
	}
}

// TestGatewayChoices: the demo's namespaced EffectivePolicies have 5
// targets and one Gateway with its 2 routes; a graph without a Gateway is
// drawn whole.
func TestGatewayChoices(t *testing.T) {
	src := newDemoSource(t)
	l, err := src.EffectivePolicies(context.Background(), "", false)
	if err != nil {
		t.Fatal(err)
	}
	choices, _, targets := gatewayChoices(render.Items(l))
	if targets != 5 || len(choices) != 1 || choices[0].Routes != 2 {
		t.Errorf("targets %d, choices %+v", targets, choices)
	}
	if g, err := graphFor(nil, ""); err != nil || g.Focus != "" || len(g.Nodes) != 0 {
		t.Errorf("empty graph: %+v %v", g, err)
	}
}

// countingSource counts the lists asked of it.
type countingSource struct {
	*demoSource
	lists int
}

func (c *countingSource) EffectivePolicies(ctx context.Context, ns string, cluster bool) (runtime.Object, error) {
	c.lists++
	return c.demoSource.EffectivePolicies(ctx, ns, cluster)
}

// TestOfflineListedOnce: the offline source cannot change, so the graph's
// lists are asked once however often the page asks for the graph.
func TestOfflineListedOnce(t *testing.T) {
	src := &countingSource{demoSource: newDemoSource(t)}
	s := newTestServer(t, src, "")
	for range 3 {
		if code, _ := get(t, s, "/api/graph", url.Values{"gateway": {demoGatewayID}}); code != 200 {
			t.Fatalf("status %d", code)
		}
	}
	if src.lists != 2 {
		t.Errorf("%d lists, want 2 (namespaced and cluster-scoped, once)", src.lists)
	}
}

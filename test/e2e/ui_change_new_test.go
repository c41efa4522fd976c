//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/effectivepolicy-dev/effectivepolicy/test/scale"
)

// cakeRoute is a route the demo lacks, under its Gateway: a target every
// policy reaching it reaches for the first time (pkg/cli/ui's
// TestChangeAfterGraph has it too).
const cakeRoute = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: cake, namespace: baker}
spec:
  parentRefs: [{name: cupcakes, namespace: infra}]
  hostnames: [cake.cupcakes.example]
  rules: [{backendRefs: [{name: baker, port: 8080}]}]
`

const (
	cakeID     = "gateway.networking.k8s.io/HTTPRoute/baker/cake"
	newRouteID = "gateway.networking.k8s.io/HTTPRoute/app-3/route-new"
)

// newServiceID is the id of the n-th Service newRoute adds.
func newServiceID(n int) string { return fmt.Sprintf("/Service/app-3/svc-new-%d", n) }

// newRoute is, in the generated topology at foldScale, a route beside
// route-98 (its parents) to n new Services, twelve to a rule (Gateway API
// allows sixteen backends a rule), with the Services.
func newRoute(t *testing.T, n int) string {
	t.Helper()
	var parents interface{}
	for _, o := range scale.Generate(scale.Options{Scale: foldScale, Seed: 1, GatewayAPICRDs: true}) {
		if o.GetKind() == "HTTPRoute" && o.GetNamespace() == "app-3" && o.GetName() == "route-98" {
			parents = o.Object["spec"].(map[string]interface{})["parentRefs"]
		}
	}
	if parents == nil {
		t.Fatal("no route-98 in the generated topology")
	}
	var b strings.Builder
	var rules []interface{}
	for i := range n {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Service\nmetadata: {name: svc-new-%d, namespace: app-3}\nspec: {ports: [{name: http, port: 80}]}\n", i)
		if i%12 == 0 {
			rules = append(rules, map[string]interface{}{"name": fmt.Sprintf("rule-%d", i/12), "backendRefs": []interface{}{}})
		}
		r := rules[len(rules)-1].(map[string]interface{})
		r["backendRefs"] = append(r["backendRefs"].([]interface{}), map[string]interface{}{"name": fmt.Sprintf("svc-new-%d", i), "port": 80})
	}
	route, err := yaml.Marshal(map[string]interface{}{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
		"metadata": map[string]interface{}{"name": "route-new", "namespace": "app-3"},
		"spec":     map[string]interface{}{"parentRefs": parents, "hostnames": []interface{}{"new.bench.example"}, "rules": rules},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String() + "---\n" + string(route)
}

// changeNewCase is one change whose targets are reached for the first time.
type changeNewCase struct {
	name, page, apply string
	// summary is what the panel says; labels what the drawn nodes say.
	summary string
	labels  map[string][]string
	// counted is how many new targets the drawn holders count folded
	// (▶ inside: N newly reached), notDrawn some of them.
	counted  int
	notDrawn []string
	// stack is what a click on the new target shows (its stack after
	// the change: it has no EffectivePolicy yet).
	stack []string
}

// TestUIChangeNewTargets: the Change view draws the targets a change
// reaches for the first time, which the graph had no node for: each marked
// as new with its policies after the change; in a folded graph the new
// leaves are drawn when few and counted on their holder when many, as the
// Policy and Request views do; the next review takes them away.
func TestUIChangeNewTargets(t *testing.T) {
	dir := uiPlugin(t)
	pages := map[string]string{
		"demo":   startUI(t, dir, "-A", "--offline", "-f", "hack/demo"),
		"folded": startUI(t, dir, "-A", "--offline", "-f", writeScaleTopology(t, foldScale)),
	}
	ctx := newBrowser(t)
	cases := []changeNewCase{
		{name: "a new route in the demo", page: "demo", apply: cakeRoute, summary: "1 target reached for the first time",
			labels: map[string][]string{cakeID: {"baker/cake", "4 policies · 4 Enforced", "✚ new with this change", "▶ newly reached"}},
			stack:  []string{"(after the change)", "TimeoutPolicy", "request: 30s"}},
		{name: "a new route to 2 new Services, folded", page: "folded", apply: newRoute(t, 2), summary: "3 targets reached for the first time",
			labels: map[string][]string{
				newRouteID:      {"app-3/route-new", "✚ new with this change", "▶ newly reached"},
				newServiceID(0): {"app-3/svc-new-0", "✚ new with this change", "▶ newly reached"},
				newServiceID(1): {"app-3/svc-new-1", "▶ newly reached"},
			}},
		{name: "a new route to 36 new Services, folded", page: "folded", apply: newRoute(t, 36), summary: "37 targets reached for the first time",
			labels:  map[string][]string{newRouteID: {"app-3/route-new", "✚ new with this change", "▶ newly reached"}},
			counted: 36, notDrawn: []string{newServiceID(0), newServiceID(35)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if ready := openPage(ctx, t, pages[tc.page]); ready != "true" {
				t.Fatalf("page not ready: %s", ready)
			}
			checkChangeNew(ctx, t, tc)
		})
	}
}

// checkChangeNew reviews tc's change on the open page and checks what it
// draws, then that a review reaching nothing new takes it away.
func checkChangeNew(ctx context.Context, t *testing.T, tc changeNewCase) {
	t.Helper()
	changeForm(ctx, t, tc.apply, "")
	if err := wantText(panelText(ctx, t, "ul.tree"), "What the change would do", tc.summary); err != nil {
		t.Error(err)
	}
	nodes := graphNodes(ctx, t)
	for id, want := range tc.labels {
		n, ok := nodes[id]
		if !ok || !n.Marked || n.Outcome == "none" {
			t.Errorf("%s: not drawn, marked and colored: %+v", id, n)
			continue
		}
		if err := wantText(n.Label, want...); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	if tc.page == "demo" {
		screenshot(ctx, t, "change-new")
	}
	if n := countedNew(nodes); n != tc.counted {
		t.Errorf("the drawn holders count %d new targets folded, want %d", n, tc.counted)
	}
	for _, id := range tc.notDrawn {
		if _, ok := nodes[id]; ok {
			t.Errorf("%s drawn, want it counted on its holder", id)
		}
	}
	if len(tc.stack) > 0 {
		js(ctx, t, fmt.Sprintf(`document.querySelector('#panel').replaceChildren(); window.epGraph.tap(%q)`, cakeID))
		if err := wantText(panelText(ctx, t, "ul.tree"), tc.stack...); err != nil {
			t.Errorf("a click on the new target: %v", err)
		}
	}
	// A review that reaches nothing new takes the new objects away.
	changeForm(ctx, t, "", "retrypolicy/none-such -n nowhere")
	panelText(ctx, t, "ul.tree")
	nodes = graphNodes(ctx, t)
	for id := range tc.labels {
		if _, ok := nodes[id]; ok {
			t.Errorf("%s still drawn after a review that does not reach it", id)
		}
	}
}

// insideNew is how a marked holder counts the new targets folded in it.
var insideNew = regexp.MustCompile(`(?m)^▶ inside: .*?(\d+) newly reached`)

// countedNew sums the new targets the drawn holders count folded.
func countedNew(nodes map[string]pageNode) int {
	sum := 0
	for _, n := range nodes {
		if !n.Marked {
			continue
		}
		for _, m := range insideNew.FindAllStringSubmatch(n.Label, -1) {
			c, _ := strconv.Atoi(m[1])
			sum += c
		}
	}
	return sum
}

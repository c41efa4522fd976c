package topology

import (
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

// ParseFromNamespaces reads both a listener's allowedRoutes.namespaces and a
// Gateway's allowedListeners.namespaces.
func TestParseFromNamespaces(t *testing.T) {
	yes := labels.Set{"expose": "yes"}
	no := labels.Set{"expose": "no"}
	for _, tc := range []struct {
		name     string
		ns       map[string]interface{}
		def      string
		wantFrom string
		// nil: no selector; otherwise which label sets it matches
		matches map[string]bool
	}{
		{name: "absent stanza keeps the default", ns: nil, def: "None", wantFrom: "None"},
		{name: "absent from keeps the default", ns: map[string]interface{}{}, def: "Same", wantFrom: "Same"},
		{name: "from All", ns: map[string]interface{}{"from": "All"}, def: "None", wantFrom: "All"},
		{name: "selector", def: "None", wantFrom: "Selector",
			ns: map[string]interface{}{"from": "Selector", "selector": map[string]interface{}{
				"matchLabels": map[string]interface{}{"expose": "yes"}}},
			matches: map[string]bool{"yes": true, "no": false}},
		{name: "Selector without a selector selects nothing", def: "None", wantFrom: "Selector",
			ns: map[string]interface{}{"from": "Selector"}, matches: map[string]bool{"yes": false, "no": false}},
		{name: "malformed selector selects nothing", def: "Same", wantFrom: "Selector",
			ns: map[string]interface{}{"from": "Selector", "selector": map[string]interface{}{
				"matchExpressions": []interface{}{map[string]interface{}{"key": "expose", "operator": "Bogus"}}}},
			matches: map[string]bool{"yes": false, "no": false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from, sel := ParseFromNamespaces(tc.ns, tc.def)
			if from != tc.wantFrom {
				t.Errorf("from = %q, want %q", from, tc.wantFrom)
			}
			if tc.matches == nil {
				if sel != nil {
					t.Errorf("selector = %v, want none", sel)
				}
				return
			}
			if sel == nil {
				t.Fatal("no selector")
			}
			for name, set := range map[string]labels.Set{"yes": yes, "no": no} {
				if got := sel.Matches(set); got != tc.matches[name] {
					t.Errorf("matches %s = %v, want %v", name, got, tc.matches[name])
				}
			}
		})
	}
}

package topology

import (
	"reflect"
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

// A listener's tls block is kept as written: no block is nil, unset fields are "" (the CRD
// defaults them), every certificateRef in order.
func TestParseListenerTLS(t *testing.T) {
	for _, tc := range []struct {
		name string
		l    map[string]interface{}
		want *ListenerTLS
	}{
		{"no tls block", map[string]interface{}{"name": "http", "protocol": "HTTP"}, nil},
		{"empty tls block", map[string]interface{}{"name": "https", "tls": map[string]interface{}{}}, &ListenerTLS{}},
		{"passthrough", map[string]interface{}{"name": "tls", "tls": map[string]interface{}{"mode": "Passthrough"}}, &ListenerTLS{Mode: "Passthrough"}},
		{"terminate, two refs", map[string]interface{}{"name": "https", "tls": map[string]interface{}{"mode": "Terminate", "certificateRefs": []interface{}{
			map[string]interface{}{"name": "a"},
			map[string]interface{}{"group": "core", "kind": "Secret", "namespace": "other", "name": "b"},
			"not a map",
		}}}, &ListenerTLS{Mode: "Terminate", CertificateRefs: []CertificateRef{{Name: "a"}, {Group: "core", Kind: "Secret", Namespace: "other", Name: "b"}}}},
	} {
		ls := parseListeners(map[string]interface{}{"listeners": []interface{}{tc.l}})
		if len(ls) != 1 {
			t.Fatalf("%s: %d listeners", tc.name, len(ls))
		}
		if !reflect.DeepEqual(ls[0].TLS, tc.want) {
			t.Errorf("%s: TLS %+v, want %+v", tc.name, ls[0].TLS, tc.want)
		}
	}
}

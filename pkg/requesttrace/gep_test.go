package requesttrace

import (
	"encoding/json"
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/apis/effectivepolicy/v1alpha1"
)

// The GEP-713 examples' topology (test/scenarios/topology.yaml): g1 > r1 >
// b1, g1 > r2 > b1, g2 > r3 > b1, g2 > r4 > b2. Backend b1 has three
// contexts; a trace must show the one the request travels. Expected values
// are the scenario's own (gep713-example2-defaults-overrides/expected.json).
func TestGEPExampleContexts(t *testing.T) {
	scen := "../../test/scenarios"
	e := newEngine(t, readFile(t, scen, "crds", "colorpolicies.yaml"), readFile(t, scen, "topology.yaml"),
		readFile(t, scen, "gep713-example2-defaults-overrides", "policies.yaml"))
	cases := []struct {
		name        string
		gateway     string
		route       string // r1 and r2 (r3 and r4) tie on every match: the older wins, then the name
		routeColor  string
		routeVia    []string
		backend     string
		backendVia  []string
		backendSpec string
	}{
		{"g1: r1 wins the tie by name", "g1", "r1", `{"color":"blue"}`, []string{"Gateway/g1", "HTTPRoute/r1"}, "b1", []string{"Gateway/g1", "HTTPRoute/r1"}, `{"color":"blue"}`},
		{"g2: r3 wins the tie by name", "g2", "r3", `{"color":"yellow"}`, []string{"Gateway/g2"}, "b1", []string{"Gateway/g2"}, `{"color":"yellow"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := mustTrace(t, e, v1alpha1.RequestTraceSpec{Gateway: gw("colors", tc.gateway), Request: v1alpha1.TracedRequest{Host: "any.example.com", Path: "/"}}, everything(e))
			if len(s.Matches) != 1 {
				t.Fatalf("matches: %+v", s.Matches)
			}
			m := s.Matches[0]
			if m.Reason != "Matched" || m.Route == nil || m.Route.Name != tc.route {
				t.Fatalf("match: %+v", m)
			}
			if m.Listener != "http" || m.Port != 80 || m.HostnameMatching != Precedence {
				t.Errorf("listener: %+v", m)
			}
			if len(m.Backends) != 1 || m.Backends[0].Ref.Name != tc.backend || m.Backends[0].Weight != 1 || *m.Backends[0].Port != 80 {
				t.Errorf("backends: %+v", m.Backends)
			}
			checkPolicy(t, "route", m.Policies, tc.routeColor, tc.routeVia)
			checkPolicy(t, "backend", m.BackendPolicies, tc.backendSpec, tc.backendVia)
			if len(m.BackendPolicies) == 1 && (m.BackendPolicies[0].Backend == nil || m.BackendPolicies[0].Backend.Name != tc.backend) {
				t.Errorf("backend policy names %+v", m.BackendPolicies[0].Backend)
			}
		})
	}
}

// TestGEPExampleOlderRouteWins: r2, created first, wins the tie on g1 and
// brings p1's red (via g1 only) to b1.
func TestGEPExampleOlderRouteWins(t *testing.T) {
	scen := "../../test/scenarios"
	older := `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r2, namespace: colors, creationTimestamp: "2020-01-01T00:00:00Z"}
spec:
  parentRefs: [{name: g1}]
  rules: [{backendRefs: [{name: b1, port: 80}]}]
`
	e := newEngine(t, readFile(t, scen, "crds", "colorpolicies.yaml"), readFile(t, scen, "topology.yaml"),
		readFile(t, scen, "gep713-example2-defaults-overrides", "policies.yaml"), older)
	s := mustTrace(t, e, v1alpha1.RequestTraceSpec{Gateway: gw("colors", "g1"), Request: v1alpha1.TracedRequest{Host: "x", Path: "/"}}, everything(e))
	m := s.Matches[0]
	if m.Route == nil || m.Route.Name != "r2" {
		t.Fatalf("route %+v", m.Route)
	}
	checkPolicy(t, "route", m.Policies, `{"color":"red"}`, []string{"Gateway/g1"})
	checkPolicy(t, "backend", m.BackendPolicies, `{"color":"red"}`, []string{"Gateway/g1"})
}

// checkPolicy asserts the single ColorPolicy entry (none when spec is "").
func checkPolicy(t *testing.T, what string, ps []v1alpha1.TracePolicy, spec string, via []string) {
	t.Helper()
	if spec == "" {
		if len(ps) != 0 {
			t.Errorf("%s policies: want none, got %+v", what, ps)
		}
		return
	}
	if len(ps) != 1 {
		t.Fatalf("%s policies: %+v", what, ps)
	}
	p := ps[0]
	if p.Kind != "ColorPolicy" || !jsonEqual(p.Spec.Raw, spec) {
		t.Errorf("%s policy %s %s, want %s", what, p.Kind, p.Spec.Raw, spec)
	}
	var got []string
	for _, v := range p.Via {
		got = append(got, v.Kind+"/"+v.Name)
	}
	if len(got) != len(via) {
		t.Errorf("%s via %v, want %v", what, got, via)
		return
	}
	for i := range via {
		if got[i] != via[i] {
			t.Errorf("%s via %v, want %v", what, got, via)
		}
	}
}

func jsonEqual(raw []byte, want string) bool {
	var a, b interface{}
	if json.Unmarshal(raw, &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

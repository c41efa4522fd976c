package envoygateway

import (
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
)

// knownSeeds are the seeds whose disagreements docs/differential.md
// explains, each with its class.
var knownSeeds = map[uint64]string{
	1193:  ClassEGTCPAuthorization,
	2080:  ClassEGTCPAuthorization, // the policy has a mergeType
	6185:  ClassEGTCPAuthorization, // ours: the route's own, newer, policy
	8949:  ClassEGTCPAuthorization, // the policy loses another target, not its route
	1085:  ClassEGStatusPerSection,
	6131:  ClassEGStatusPerSection, // two listeners, beaten on one
	2701:  ClassEGStatusPerSection, // a route and its rule, beaten on the rule
	6732:  ClassEGStatusPerSection, // a UDPRoute rule and the route's Gateway, beaten on the rule
	1508:  ClassEGEEPOnL4Route,
	20617: ClassEGEEPOnL4Route,
	2118:  ClassEGEEPOnL4Route, // TLSRoutes
}

var (
	knownOnce     sync.Once
	knownOutcomes map[uint64]differential.Outcome
	knownErr      error
)

// judgeKnown judges the known seeds with Envoy Gateway (one egctl run for
// both tests) and returns their outcomes by seed.
func judgeKnown(t *testing.T) map[uint64]differential.Outcome {
	t.Helper()
	knownOnce.Do(func() {
		rs, err := differential.RunBatch(differential.OracleNamed("envoygateway"), []uint64{1085, 1193, 1508, 2080, 2118, 2701, 6131, 6185, 6732, 8949, 20617})
		knownErr = err
		knownOutcomes = map[uint64]differential.Outcome{}
		for _, r := range rs {
			knownOutcomes[r.Seed] = r
		}
	})
	if knownErr != nil {
		t.Fatal(knownErr)
	}
	return knownOutcomes
}

// TestKnownClassesOnTheirSeeds: every disagreement of each documented seed
// is of its class, and the case counts as that class.
func TestKnownClassesOnTheirSeeds(t *testing.T) {
	for seed, r := range judgeKnown(t) {
		d := r.Disagreements()
		if len(d) == 0 {
			t.Errorf("seed %d: no disagreement (Envoy Gateway or we changed: update docs/differential.md)", seed)
		}
		for _, c := range d {
			if got, _ := differential.Classify(r.Impl, c, r.Case.Objects()); got != knownSeeds[seed] {
				t.Errorf("seed %d: %s: class %q, want %q", seed, c, got, knownSeeds[seed])
			}
		}
		if got, want := differential.CaseClass(r), "known: "+knownSeeds[seed]; got != want {
			t.Errorf("seed %d: case class %q, want %q", seed, got, want)
		}
	}
}

// nearMiss changes one fact of a known seed's disagreement (its objects or
// its check) that the class's cause needs; the result must not be classified.
type nearMiss struct {
	name   string
	seed   uint64
	change func(objs []*unstructured.Unstructured, c *differential.Check)
}

var nearMisses = []nearMiss{
	// seed 1193: SecurityPolicy df1193-b/p02-sp names TCPRoute r2 (rule1); r2's parentRef
	// to gw2 reaches gw2's TCP listener l1, where TCPRoute df1193-a/r1 gets its authorization.
	{"1193: value no policy sets", 1193, func(_ []*unstructured.Unstructured, c *differential.Check) { c.Theirs = "Deny" }},
	{"1193: r2 has no parentRef to gw2", 1193, func(objs []*unstructured.Unstructured, _ *differential.Check) {
		setField(objs, "TCPRoute", "df1193-b", "r2", []any{map[string]any{"name": "gw1", "namespace": "df1193-a", "sectionName": "l1"}}, "spec", "parentRefs")
	}},
	{"1193: r2's parentRef names another listener", 1193, func(objs []*unstructured.Unstructured, _ *differential.Check) {
		setField(objs, "TCPRoute", "df1193-b", "r2", []any{map[string]any{"name": "gw2", "sectionName": "l2"}}, "spec", "parentRefs")
	}},
	{"1193: the policy names a rule r1 lacks", 1193, func(objs []*unstructured.Unstructured, _ *differential.Check) {
		setField(objs, "SecurityPolicy", "df1193-b", "p02-sp", []any{map[string]any{"group": "gateway.networking.k8s.io",
			"kind": "TCPRoute", "name": "r2", "sectionName": "rule2"}}, "spec", "targetRefs")
	}},
	{"1193: the policy also sets cors (invalid on TCP)", 1193, func(objs []*unstructured.Unstructured, _ *differential.Check) {
		setField(objs, "SecurityPolicy", "df1193-b", "p02-sp", map[string]any{"maxAge": "2s"}, "spec", "cors")
	}},
	{"1193: the check is on an HTTP route", 1193, func(_ []*unstructured.Unstructured, c *differential.Check) { c.Target.Kind = "HTTPRoute" }},
	// seed 8949: SecurityPolicy df8949-a/p03-sp names TCPRoute r3 and gw1/l1, which the older
	// p01-sp names too; r3 and r1 share gw2's TCP listener l3, where r1 gets p03's authorization.
	{"8949: the policy loses its route too", 8949, func(objs []*unstructured.Unstructured, _ *differential.Check) {
		setField(objs, "SecurityPolicy", "df8949-a", "p01-sp", []any{map[string]any{"group": "gateway.networking.k8s.io",
			"kind": "TCPRoute", "name": "r3"}}, "spec", "targetRefs")
	}},
	// seed 2080: SecurityPolicy df2080-a/p04-sp, with mergeType, names TCPRoute r3; r3 and r2
	// share gw1's TCP listener l2, where r2 gets its authorization.
	{"2080: a Gateway SecurityPolicy with cors (the merge is invalid on TCP)", 2080, func(objs []*unstructured.Unstructured, _ *differential.Check) {
		setField(objs, "SecurityPolicy", "df2080-b", "p03-sp", []any{map[string]any{"group": "gateway.networking.k8s.io",
			"kind": "Gateway", "name": "gw1"}}, "spec", "targetRefs")
		setField(objs, "SecurityPolicy", "df2080-b", "p03-sp", "df2080-a", "metadata", "namespace")
	}},
	{"2080: the policy with mergeType also sets cors", 2080, func(objs []*unstructured.Unstructured, _ *differential.Check) {
		setField(objs, "SecurityPolicy", "df2080-a", "p04-sp", map[string]any{"maxAge": "4s"}, "spec", "cors")
	}},
	// seed 1085: ClientTrafficPolicy df1085-a/p05-ctp names gw1 and gw1/l1; the older
	// p03-ctp names gw1/l1.
	{"1085: no older policy on the listener", 1085, func(objs []*unstructured.Unstructured, _ *differential.Check) {
		setField(objs, "ClientTrafficPolicy", "df1085-a", "p03-ctp", "p99-ctp", "metadata", "name")
		setField(objs, "ClientTrafficPolicy", "df1085-a", "p99-ctp", "2027-01-01T00:00:00Z", "metadata", "creationTimestamp")
	}},
	{"1085: the policy names the listener only", 1085, func(objs []*unstructured.Unstructured, _ *differential.Check) {
		setField(objs, "ClientTrafficPolicy", "df1085-a", "p05-ctp", []any{map[string]any{"group": "gateway.networking.k8s.io",
			"kind": "Gateway", "name": "gw1", "sectionName": "l1"}}, "spec", "targetRefs")
	}},
	{"1085: Conflicted on the whole Gateway too", 1085, func(_ []*unstructured.Unstructured, c *differential.Check) {
		c.At = append(c.At, differential.Node{Kind: "Gateway", Namespace: "df1085-a", Name: "gw1"})
	}},
	{"1085: no ancestor reported", 1085, func(_ []*unstructured.Unstructured, c *differential.Check) { c.At = nil }},
	// seed 6131: BackendTrafficPolicy df6131-a/p03-btp names gw1/l1 and gw1/l3; the older
	// p02-btp names gw1/l1.
	{"6131: beaten on both listeners", 6131, func(objs []*unstructured.Unstructured, _ *differential.Check) {
		setField(objs, "BackendTrafficPolicy", "df6131-a", "p02-btp", []any{
			map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw1", "sectionName": "l1"},
			map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw1", "sectionName": "l3"}},
			"spec", "targetRefs")
	}},
	// seed 2701: SecurityPolicy df2701-b/p02-sp names GRPCRoute r1 and r1/rule1; the older
	// p01-sp names r1/rule1.
	{"2701: the policy names the rule only", 2701, func(objs []*unstructured.Unstructured, _ *differential.Check) {
		setField(objs, "SecurityPolicy", "df2701-b", "p02-sp", []any{map[string]any{"group": "gateway.networking.k8s.io",
			"kind": "GRPCRoute", "name": "r1", "sectionName": "rule1"}}, "spec", "targetRefs")
	}},
	{"2701: Conflicted on a Gateway the route does not name", 2701, func(_ []*unstructured.Unstructured, c *differential.Check) {
		c.At = append(c.At, differential.Node{Kind: "Gateway", Namespace: "df2701-a", Name: "gw9"})
	}},
	// seed 6732: BackendTrafficPolicy df6732-a/p07-btp names UDPRoute r2/rule1 and gw1, r2's
	// parent; the older p04-btp names r2/rule1.
	{"6732: the policy names the rule only", 6732, func(objs []*unstructured.Unstructured, _ *differential.Check) {
		setField(objs, "BackendTrafficPolicy", "df6732-a", "p07-btp", []any{map[string]any{"group": "gateway.networking.k8s.io",
			"kind": "UDPRoute", "name": "r2", "sectionName": "rule1"}}, "spec", "targetRefs")
	}},
	{"6732: the policy's Gateway is not the route's parent", 6732, func(objs []*unstructured.Unstructured, _ *differential.Check) {
		setField(objs, "BackendTrafficPolicy", "df6732-a", "p07-btp", []any{
			map[string]any{"group": "gateway.networking.k8s.io", "kind": "UDPRoute", "name": "r2", "sectionName": "rule1"},
			map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw9"}}, "spec", "targetRefs")
	}},
	// seed 1508: EnvoyExtensionPolicies df1508-b/p01-eep (older) and p03-eep name TCPRoute r2.
	{"1508: the route is an HTTPRoute", 1508, func(objs []*unstructured.Unstructured, _ *differential.Check) {
		for _, p := range []string{"p01-eep", "p03-eep"} {
			setField(objs, "EnvoyExtensionPolicy", "df1508-b", p, []any{map[string]any{"group": "gateway.networking.k8s.io",
				"kind": "HTTPRoute", "name": "r2"}}, "spec", "targetRefs")
		}
	}},
	{"1508: the other policy is newer", 1508, func(objs []*unstructured.Unstructured, _ *differential.Check) {
		setField(objs, "EnvoyExtensionPolicy", "df1508-b", "p01-eep", "2027-01-01T00:00:00Z", "metadata", "creationTimestamp")
	}},
	{"1508: Conflicted on a Gateway r2 does not name", 1508, func(_ []*unstructured.Unstructured, c *differential.Check) {
		c.At = append(c.At, differential.Node{Kind: "Gateway", Namespace: "df1508-b", Name: "gw9"})
	}},
	{"1508: we report it Conflicted too", 1508, func(_ []*unstructured.Unstructured, c *differential.Check) { c.Ours = "Conflicted"; c.Theirs = "" }},
}

// TestKnownClassesRefuseNearMisses: each class refuses a disagreement
// lacking one fact its cause needs.
func TestKnownClassesRefuseNearMisses(t *testing.T) {
	outcomes := judgeKnown(t)
	for _, tc := range nearMisses {
		t.Run(tc.name, func(t *testing.T) {
			r := outcomes[tc.seed]
			d := r.Disagreements()
			if len(d) != 1 {
				t.Fatalf("seed %d: %d disagreements, want the 1 documented", tc.seed, len(d))
			}
			var objs []*unstructured.Unstructured
			for _, o := range r.Case.Objects() {
				objs = append(objs, o.DeepCopy())
			}
			c := d[0]
			c.At = append([]differential.Node(nil), c.At...)
			tc.change(objs, &c)
			if got, ok := differential.Classify(r.Impl, c, objs); ok {
				t.Errorf("%s: classified %q", c, got)
			}
		})
	}
}

// setField sets a field of the object kind namespace/name in objs.
func setField(objs []*unstructured.Unstructured, kind, ns, name string, v any, path ...string) {
	o := objectNamed(objs, kind, ns, name)
	if o == nil {
		panic("no " + kind + " " + ns + "/" + name)
	}
	if err := unstructured.SetNestedField(o.Object, v, path...); err != nil {
		panic(err)
	}
}

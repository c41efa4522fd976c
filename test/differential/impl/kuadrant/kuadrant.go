package kuadrant

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/oracles/kuadrant/agree"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/oracles/kuadrant/kuadrantoracle"
)

// kuadrant judges with kuadrant-operator v1.5.2's own code, run by the
// oracle module test/differential/oracles/kuadrant (its README says how):
// the effective AuthPolicy, RateLimitPolicy and TokenRateLimitPolicy of
// every path GatewayClass > Gateway > Listener > Route > RouteRule, with
// the policy each named entry came from, and every policy's standing.
type kuadrant struct{}

func init() { differential.Register(kuadrant{}) }

func (kuadrant) Name() string { return "kuadrant" }

// Features: Kuadrant policies instead of Envoy Gateway's. kuadrant-operator
// v1.5.2 watches no ListenerSet, and its policies have no targetSelectors.
func (kuadrant) Features() gen.Features { return gen.Features{Kuadrant: true} }

// Kinds are the policy kinds the generator writes for Kuadrant: the fixed
// seeds must see a value of each.
func (kuadrant) Kinds() []string { return []string{gen.AP, gen.RLP, gen.TRLP, gen.DNS, gen.TLS} }

// kuadrantCommand is oracles/kuadrant's main, which reads one input on stdin and runs the
// kuadrant-operator test binary the module builds once and caches (kuadrantoracle.Binary);
// $KUADRANT_ORACLE names a built command instead.
var kuadrantCommand = differential.OracleCommand("KUADRANT_ORACLE", "kuadrant")

// Command implements differential.Oracle.
func (kuadrant) Command() ([]string, error) { return kuadrantCommand() }

// Input: the objects as generated, and the cert-manager issuer each
// TLSPolicy names (agree.Issuers): the engine cannot see issuers, so the
// oracle is never left to reject a TLSPolicy for lack of one. The oracle
// adds the Kuadrant object, and the statuses a gateway accepting
// everything would write.
func (kuadrant) Input(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	return append(agree.Issuers(objs), objs...), nil
}

// Ours adds Kuadrant's policy CRDs and their defaults, as kube-apiserver would.
func (kuadrant) Ours(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	s, err := kuadrantCRDs()
	if err != nil {
		return nil, err
	}
	return s.Stored(objs), nil
}

var (
	kuadrantSchemasOnce sync.Once
	kuadrantSchemas     *differential.Schemas
	kuadrantSchemasErr  error
)

// kuadrantCRDs returns kuadrant-operator v1.5.2's policy CRDs and their
// schemas, from test/upstream/kuadrant/crds.sh (the Go module proxy).
func kuadrantCRDs() (*differential.Schemas, error) {
	kuadrantSchemasOnce.Do(func() {
		kuadrantSchemas, kuadrantSchemasErr = differential.LoadCRDs("test/upstream/kuadrant/crds.sh")
	})
	return kuadrantSchemas, kuadrantSchemasErr
}

// Compare: one check per Kuadrant path and kind (the named entries of the
// effective policy and the policy each came from, against the engine's
// entry agree.Match pairs it with), one per engine entry no path accounts
// for, two per listener and DNSPolicy or TLSPolicy (listenerChecks), and
// one per policy (its standing, agree.OracleVerdicts against
// agree.OurVerdicts).
func (kuadrant) Compare(objs []*unstructured.Unstructured, ours *differential.Ours, out []byte) ([]differential.Check, error) {
	var res kuadrantoracle.Result
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("kuadrant oracle output: %w", err)
	}
	outs := ours.ByKey()
	entries, err := agree.RouteEntries(outs)
	if err != nil {
		return nil, err
	}
	sort.Slice(entries, func(i, j int) bool { return agree.Describe(entries[i]) < agree.Describe(entries[j]) })
	var checks []differential.Check
	var paths []kuadrantoracle.Path
	for _, p := range res.Paths {
		if kuadrantAttached(objs, p.Path) {
			paths = append(paths, p)
		}
	}
	used := make([]bool, len(entries))
	for _, p := range paths {
		theirs := agree.Entries{}
		for id, r := range p.Rules {
			theirs[id] = kuadrantoracle.SourceName(r.Source)
		}
		c := differential.Check{Kind: p.Kind, Subject: p.ID, Field: "entries", Theirs: entriesString(theirs), Path: kuadrantPath(p.Path)}
		if len(c.Path) > 0 {
			c.Target = c.Path[len(c.Path)-1]
		}
		if i := agree.Match(p, entries); i >= 0 {
			used[i] = true
			c.Ours = entriesString(entries[i].Entries)
		}
		checks = append(checks, c)
	}
	for i, e := range entries {
		if !used[i] && !onSomePath(e, paths) && routeAttached(objs, e.Kind, e.Namespace, e.Route) {
			checks = append(checks, differential.Check{Kind: e.Kind, Subject: agree.Describe(e), Field: "entries",
				Ours: entriesString(e.Entries), Target: differential.Node{Kind: "HTTPRoute", Namespace: e.Namespace, Name: e.Route}})
		}
	}
	checks = append(checks, listenerChecks(&res, outs)...)
	return append(checks, kuadrantStanding(objs, &res, paths, outs)...), nil
}

// onSomePath says whether entry e lies on one of paths: a whole-route
// entry the engine lists for a context whose every rule has an entry of
// its own stands for no rule, so no path is paired with it.
func onSomePath(e agree.RouteEntry, paths []kuadrantoracle.Path) bool {
	for _, p := range paths {
		if agree.Match(p, []agree.RouteEntry{e}) == 0 {
			return true
		}
	}
	return false
}

// entriesString writes named entries and their sources, sorted: "id=ns/name;...".
func entriesString(e agree.Entries) string {
	parts := make([]string, 0, len(e))
	for id, src := range e {
		parts = append(parts, id+"="+src)
	}
	sort.Strings(parts)
	return strings.Join(parts, ";")
}

func kuadrantPath(path []kuadrantoracle.Node) []differential.Node {
	out := make([]differential.Node, 0, len(path))
	for _, n := range path {
		kind := n.Kind
		switch kind {
		case "Listener":
			kind = "Gateway"
		case "HTTPRouteRule":
			kind = "HTTPRoute"
		case "GRPCRouteRule":
			kind = "GRPCRoute"
		}
		out = append(out, differential.Node{Kind: kind, Namespace: n.Namespace, Name: n.Name, Section: n.SectionName})
	}
	return out
}

//go:build istio

package istio

// The Istio oracle is built only with -tags istio: its program is a test binary of Istio's
// pilot/pkg/model (test/differential/oracles/istio), whose first build takes many minutes, so
// that `make test` (TestAgree judges every registered oracle) never builds it.

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential"
	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// istio judges with istio.io/istio's own policy selection (pilot/pkg/model, release-1.31), run
// by test/differential/oracles/istio: which AuthorizationPolicies, RequestAuthentications,
// WasmPlugins, TrafficExtensions, Telemetries and EnvoyFilters apply to each Gateway, and to the waypoint of each Service, in
// Istio's order.
type istio struct{}

func init() { differential.Register(istio{}) }

func (istio) Name() string { return "istio" }

// Features: the Istio generator (gen/istio.go).
func (istio) Features() gen.Features { return gen.Features{Istio: true} }

// istioCommand is oracles/istio's main (it builds, once, and runs Istio's test binary);
// $ISTIO_ORACLE names a built command instead.
var istioCommand = differential.OracleCommand("ISTIO_ORACLE", "istio")

// Command implements differential.Oracle.
func (istio) Command() ([]string, error) { return istioCommand() }

// Input: the objects once each (cases judged in one batch each carry the root namespace).
func (istio) Input(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	return dedupe(objs), nil
}

// Ours adds Istio's policy CRDs (test/upstream/istio/crds.sh) and their defaults.
func (istio) Ours(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	s, err := istioCRDs()
	if err != nil {
		return nil, err
	}
	return s.Stored(dedupe(objs)), nil
}

func dedupe(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	seen := map[string]bool{}
	var out []*unstructured.Unstructured
	for _, o := range objs {
		id := o.GetAPIVersion() + "/" + o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName()
		if !seen[id] {
			seen[id] = true
			out = append(out, o)
		}
	}
	return out
}

var (
	istioSchemasOnce sync.Once
	istioSchemas     *differential.Schemas
	istioSchemasErr  error
)

func istioCRDs() (*differential.Schemas, error) {
	istioSchemasOnce.Do(func() {
		istioSchemas, istioSchemasErr = differential.LoadCRDs("test/upstream/istio/crds.sh")
	})
	return istioSchemas, istioSchemasErr
}

// istioOutput is the oracle's JSON (test/differential/oracles/istio/README.md).
type istioOutput struct {
	Gateways []istioWorkload `json:"gateways"`
	Services []istioWorkload `json:"services"`
	Invalid  []string        `json:"invalid"`
}

type istioWorkload struct {
	Namespace              string              `json:"namespace"`
	Name                   string              `json:"name"`
	AuthorizationPolicies  map[string][]string `json:"authorizationPolicies"`
	RequestAuthentications []string            `json:"requestAuthentications"`
	TrafficExtensions      map[string][]string `json:"trafficExtensions"`
	EnvoyFilters           map[string][]string `json:"envoyFilters"`
	Telemetry              struct {
		Root     string   `json:"root"`
		Proxy    string   `json:"proxy"`
		Workload []string `json:"workload"`
	} `json:"telemetry"`
}

// The order Istio runs each kind's policies in, by action or phase: authz builder
// (pilot/pkg/security/authz/builder) CUSTOM, then AUDIT, DENY, ALLOW; WasmPlugins in the HTTP
// filter chain AUTHN, AUTHZ, STATS, then the unspecified phase (pilot/pkg/networking/core
// extension.go PopAppendHTTP...). Our all-apply list is in that order.
var (
	istioActions = []string{"CUSTOM", "AUDIT", "DENY", "ALLOW"}
	istioPhases  = []string{"AUTHN", "AUTHZ", "STATS", "UNSPECIFIED"}
)

func (istio) Compare(_ []*unstructured.Unstructured, ours *differential.Ours, out []byte) ([]differential.Check, error) {
	var o istioOutput
	if err := json.Unmarshal(out, &o); err != nil {
		return nil, fmt.Errorf("istio oracle output: %w", err)
	}
	var checks []differential.Check
	for _, inv := range o.Invalid {
		checks = append(checks, differential.Check{Kind: "Validation", Subject: inv, Field: "valid", Theirs: "invalid", Ours: "accepted"})
	}
	for _, w := range o.Gateways {
		c, err := istioChecks(ours, differential.Node{Kind: "Gateway", Namespace: w.Namespace, Name: w.Name}, w, false)
		if err != nil {
			return nil, err
		}
		checks = append(checks, c...)
	}
	for _, w := range o.Services {
		c, err := istioChecks(ours, differential.Node{Kind: "Service", Namespace: w.Namespace, Name: w.Name}, w, true)
		if err != nil {
			return nil, err
		}
		checks = append(checks, c...)
	}
	return checks, nil
}

// envoyFilters is Istio's list of the EnvoyFilters whose patches reach the workload, in the order
// EnvoyFilters(proxy) applies them. It merges the patches per applyTo, in filter order each; the
// generator writes one HTTP_FILTER patch per filter, so that list is the filters' order (another
// applyTo means the output is not what the generator wrote).
func envoyFilters(w istioWorkload) ([]string, error) {
	for applyTo := range w.EnvoyFilters {
		if applyTo != "HTTP_FILTER" {
			return nil, fmt.Errorf("istio oracle output: EnvoyFilter patches applied to %s; the generator writes HTTP_FILTER only", applyTo)
		}
	}
	return w.EnvoyFilters["HTTP_FILTER"], nil
}

// istioChecks compares, for one workload, each kind's list of applying policies. At a Service
// (its waypoint) the namespace-wide Telemetries Istio also merges are left out: our Service
// entry shows only what targets the Service (docs/implementations.md). EnvoyFilters are compared
// at Services too: Istio's EnvoyFilters matches a waypoint without the Services it serves, so
// none reaches one through its Service, and our Service entry must have none either.
func istioChecks(ours *differential.Ours, t differential.Node, w istioWorkload, waypoint bool) ([]differential.Check, error) {
	ef, err := envoyFilters(w)
	if err != nil {
		return nil, err
	}
	var authz, wasm, ext []string
	for _, a := range istioActions {
		authz = append(authz, w.AuthorizationPolicies[a]...)
	}
	// Istio runs WasmPlugins and TrafficExtensions in one list; our answer keeps a list per
	// kind, so each kind's policies are compared in the order Istio gives them.
	for _, p := range istioPhases {
		for _, n := range w.TrafficExtensions[p] {
			if name, ok := strings.CutPrefix(n, "WasmPlugin "); ok {
				wasm = append(wasm, name)
			}
			if name, ok := strings.CutPrefix(n, "TrafficExtension "); ok {
				ext = append(ext, name)
			}
		}
	}
	tel := w.Telemetry.Workload
	if !waypoint {
		tel = append(nonEmpty(w.Telemetry.Root, w.Telemetry.Proxy), tel...)
	}
	theirs := map[string][]string{
		gen.IstioAuthz: authz, gen.IstioRequestAuthn: w.RequestAuthentications, gen.IstioWasm: wasm, gen.IstioTelemetry: tel,
		gen.IstioTrafficExtension: ext, gen.IstioEnvoyFilter: ef,
	}
	subject := t.Kind + " " + t.Namespace + "/" + t.Name
	var checks []differential.Check
	for _, kind := range []string{gen.IstioAuthz, gen.IstioRequestAuthn, gen.IstioWasm, gen.IstioTrafficExtension, gen.IstioTelemetry, gen.IstioEnvoyFilter} {
		group := strings.SplitN(gen.IstioGroups[kind], "/", 2)[0]
		ourList := applied(ours, t, group, kind)
		checks = append(checks, differential.Check{
			Kind: kind, Subject: subject, Field: "applied",
			Theirs: strings.Join(ofCase(t.Namespace, theirs[kind]), ","),
			Ours:   strings.Join(ofCase(t.Namespace, ourList), ","),
			Target: t, Path: []differential.Node{t},
		})
	}
	return checks, nil
}

func nonEmpty(s ...string) []string {
	var out []string
	for _, x := range s {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}

// ofCase keeps the policies of the case ns belongs to (df<seed>-x): cases judged in one batch
// share the root namespace, where each names its policies df<seed>-p<k>.
func ofCase(ns string, names []string) []string {
	prefix := ns[:strings.LastIndex(ns, "-")+1]
	var out []string
	for _, n := range names {
		pns, pname, _ := strings.Cut(n, "/")
		if strings.HasPrefix(pns, prefix) || pns == gen.IstioRootNamespace && strings.HasPrefix(pname, prefix) {
			out = append(out, n)
		}
	}
	return out
}

// applied is our list of the policies of kind that apply to t, in order: an all-apply kind's
// effective list names its items' policies (fieldSources /0, /1, ...); Telemetry, which merges,
// lists its sources that are in effect, in the order they apply.
func applied(o *differential.Ours, t differential.Node, group, kind string) []string {
	tp := o.TargetPolicy(t, group, kind)
	if tp == nil {
		return nil
	}
	if kind == gen.IstioTelemetry {
		var out []string
		for _, s := range tp.Sources {
			if s.Outcome != "Conflicted" && s.Outcome != "Invalid" {
				out = append(out, s.Namespace+"/"+s.Name)
			}
		}
		return out
	}
	var out []string
	for _, e := range tp.Effective {
		if e.SectionName != "" {
			continue
		}
		for i := 0; ; i++ {
			src, ok := e.FieldSources[fmt.Sprintf("/%d", i)]
			if !ok {
				break
			}
			out = append(out, src)
		}
	}
	return out
}

package istiooracle

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Result is what Istio computes for one input (README.md documents the JSON).
type Result struct {
	RootNamespace string `json:"rootNamespace"`
	// Gateways are the Istio Gateways of the input (GatewayClass controllerName
	// istio.io/gateway-controller, or class "istio"), in input order.
	Gateways []Workload `json:"gateways"`
	// Services are the input's Services, each as seen by a waypoint serving it.
	Services []Workload `json:"services"`
	// Invalid lists policies Istio's validation rejects (istiod's webhook would refuse them).
	Invalid []string `json:"invalid,omitempty"`
	// Ignored lists objects the oracle does not read.
	Ignored []string `json:"ignored,omitempty"`
}

// Workload is what applies to one Gateway's pods, or to the waypoint serving one Service.
type Workload struct {
	Namespace string            `json:"namespace"`
	Name      string            `json:"name"`
	Labels    map[string]string `json:"labels,omitempty"`
	// AuthorizationPolicies by action (CUSTOM, AUDIT, DENY, ALLOW), "namespace/name" in Istio's order.
	AuthorizationPolicies map[string][]string `json:"authorizationPolicies"`
	// RequestAuthentications in Istio's order.
	RequestAuthentications []string `json:"requestAuthentications"`
	// TrafficExtensions by phase (AUTHN, AUTHZ, STATS, UNSPECIFIED): "WasmPlugin ns/name" or
	// "TrafficExtension ns/name", in Istio's order.
	TrafficExtensions map[string][]string `json:"trafficExtensions"`
	// EnvoyFilters by applyTo (HTTP_FILTER, CLUSTER, ...): the EnvoyFilter ("ns/name") of each
	// patch EnvoyFilters(proxy) merges, in its order (a filter's patches of one applyTo listed once).
	EnvoyFilters map[string][]string `json:"envoyFilters"`
	Telemetry    Telemetry           `json:"telemetry"`
}

// Telemetry says which Telemetries apply: the root namespace's and the proxy namespace's
// namespace-wide one (and, at a waypoint, the Service namespace's), then every selecting or
// targeting one in order; Tracing is Istio's merged tracing (TracingConfig), when any.
type Telemetry struct {
	Root      string          `json:"root,omitempty"`
	Proxy     string          `json:"proxy,omitempty"`
	Namespace string          `json:"namespace,omitempty"`
	Workload  []string        `json:"workload"`
	Tracing   json.RawMessage `json:"tracing,omitempty"`
}

// Run answers every input (a multi-document YAML) with one run of the oracle binary bin (from
// Binary), in order.
func Run(ctx context.Context, bin string, inputs ...[]byte) ([]*Result, error) {
	if len(inputs) == 0 {
		return nil, nil
	}
	dir, err := os.MkdirTemp("", "istio-oracle-run-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	files := make([]string, len(inputs))
	for i, in := range inputs {
		files[i] = filepath.Join(dir, fmt.Sprintf("in-%d.yaml", i))
		if err := os.WriteFile(files[i], in, 0o644); err != nil {
			return nil, err
		}
	}
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(os.Environ(), "ISTIO_ORACLE_INPUTS="+strings.Join(files, ":"))
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("istio oracle: %w\n%s", err, out)
	}
	results := make([]*Result, len(inputs))
	for i, f := range files {
		b, err := os.ReadFile(f + ".json")
		if err != nil {
			return nil, err
		}
		results[i] = &Result{}
		if err := json.Unmarshal(b, results[i]); err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
	}
	return results, nil
}

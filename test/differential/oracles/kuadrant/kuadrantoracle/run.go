package kuadrantoracle

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Result is what kuadrant-operator computes for one input (README.md documents the JSON).
type Result struct {
	// Paths are the effective policies, one per kind and path that has one, sorted by kind then ID.
	Paths []Path `json:"paths"`
	// Listeners say which DNSPolicies and TLSPolicies Kuadrant applies to each listener.
	Listeners []Listener `json:"listeners"`
	// Policies are the conditions of every Kuadrant policy of the input.
	Policies []Policy `json:"policies"`
	// Ignored names the input objects of kinds kuadrant-operator v1.5.2 does not watch.
	Ignored []string `json:"ignored,omitempty"`
}

// Node is one targetable of a path. Listeners, HTTPRouteRules and GRPCRouteRules carry the name
// of their Gateway or route and their own name as SectionName (unnamed route rules are
// rule-<index+1>, as policy-machinery names them).
type Node struct {
	Kind        string `json:"kind"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name"`
	SectionName string `json:"sectionName,omitempty"`
}

// Rule is one named entry of an effective policy (MergeablePolicy.Rules) and the locator of the
// policy it came from (e.g. "ratelimitpolicy.kuadrant.io:ns/name").
type Rule struct {
	Source string          `json:"source"`
	Spec   json.RawMessage `json:"spec"`
}

// Path is the effective policy of one kind on one path.
type Path struct {
	ID             string          `json:"id"`
	Kind           string          `json:"kind"`
	Path           []Node          `json:"path"`
	Rules          map[string]Rule `json:"rules"`
	SourcePolicies []string        `json:"sourcePolicies"`
	Spec           json.RawMessage `json:"spec"`
}

// Listener is one Gateway listener and the DNSPolicies and TLSPolicies ("namespace/name") Kuadrant
// picks for it (listenersForPolicy, getTLSPoliciesForListener; accepted and valid ones only).
// DNSSkipped and TLSSkipped say why Kuadrant writes no DNSRecord or Certificate for it whatever
// the policies (a listener without hostname; validateGatewayListenerBlock: no hostname, no TLS
// block, no certificateRefs, ...): then the policies picked take no effect there.
type Listener struct {
	Namespace   string   `json:"namespace"`
	Gateway     string   `json:"gateway"`
	Listener    string   `json:"listener"`
	Hostname    string   `json:"hostname,omitempty"`
	DNSPolicies []string `json:"dnsPolicies"`
	DNSSkipped  string   `json:"dnsSkipped,omitempty"`
	TLSPolicies []string `json:"tlsPolicies"`
	TLSSkipped  string   `json:"tlsSkipped,omitempty"`
}

// Condition is a status condition as Kuadrant sets it (its LastTransitionTime left empty).
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Policy is the status of one policy.
type Policy struct {
	Kind       string      `json:"kind"`
	Namespace  string      `json:"namespace"`
	Name       string      `json:"name"`
	Conditions []Condition `json:"conditions"`
}

// Condition returns the condition of type t, or nil.
func (p Policy) Condition(t string) *Condition {
	for i := range p.Conditions {
		if p.Conditions[i].Type == t {
			return &p.Conditions[i]
		}
	}
	return nil
}

// SourceName turns a rule source locator ("kind.group:namespace/name") into "namespace/name".
func SourceName(locator string) string {
	if i := strings.LastIndex(locator, ":"); i >= 0 {
		return locator[i+1:]
	}
	return locator
}

// Run answers every input (a multi-document YAML of Gateway API objects and Kuadrant policies)
// with one run of the oracle binary bin (from Binary), in order.
func Run(ctx context.Context, bin string, inputs ...[]byte) ([]*Result, error) {
	if len(inputs) == 0 {
		return nil, nil
	}
	dir, err := os.MkdirTemp("", "kuadrant-oracle-run-")
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
	cmd.Env = append(os.Environ(), "KUADRANT_ORACLE_INPUTS="+strings.Join(files, ":"))
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("kuadrant oracle: %w\n%s", err, out)
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

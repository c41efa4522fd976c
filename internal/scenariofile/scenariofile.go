// Package scenariofile is the expected.json of a case (test/scenarios,
// test/scenarios-impl and test/upstream/*; test/scenarios/README.md): what
// the EffectivePolicies must say once the case's objects are applied. The
// engine's case tests and the end-to-end tests read it, the differential
// harness writes it; one declaration keeps the three from drifting.
package scenariofile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// Expected is one case's expected.json.
type Expected struct {
	// Absent are EffectivePolicies that must not exist.
	Absent []Name `json:"absent"`
	// Effective are effective entries that must be there, with their spec
	// and the source of each field.
	Effective []Effective `json:"effective"`
	// Sources are policies' outcomes at a target.
	Sources []Source `json:"sources"`
	// EffectiveCount, where given, is how many effective entries of a
	// policy kind a target has.
	EffectiveCount []Count `json:"effectiveCount,omitempty"`
}

// Name is an EffectivePolicy's namespace and name (those of its target).
type Name struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// Target is the kind of the EffectivePolicy's target.
type Target struct {
	Kind string `json:"kind"`
}

// Policy is a policy kind.
type Policy struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
}

// Ref is one object of an effective entry's via (its context).
type Ref struct {
	Kind        string `json:"kind"`
	Name        string `json:"name"`
	SectionName string `json:"sectionName,omitempty"`
}

// Effective is an effective entry that must be there: the EffectivePolicy
// Namespace/Name has, for its target and the policy kind, an effective
// entry via those objects (and section) with Spec and FieldSources.
type Effective struct {
	Namespace    string            `json:"namespace"`
	Name         string            `json:"name"`
	Target       Target            `json:"target"`
	Policy       Policy            `json:"policy"`
	Via          []Ref             `json:"via"`
	SectionName  string            `json:"sectionName,omitempty"`
	Spec         json.RawMessage   `json:"spec"`
	FieldSources map[string]string `json:"fieldSources,omitempty"`
}

// Source is a policy's outcome that must be there: in the EffectivePolicy
// Namespace/Name, for its target and the policy kind, the policy Source
// (namespace/name) has Outcome.
type Source struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Target    Target `json:"target"`
	Policy    Policy `json:"policy"`
	Source    string `json:"source"`
	Outcome   string `json:"outcome"`
}

// Count is how many effective entries a target has: the EffectivePolicy
// Namespace/Name has Count effective entries of the policy kind.
type Count struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Target    Target `json:"target"`
	Policy    Policy `json:"policy"`
	Count     int    `json:"count"`
}

// Parse reads an expected.json; a field it does not know is an error, so
// that a misspelled check fails instead of checking nothing.
func Parse(data []byte) (Expected, error) {
	var e Expected
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return Expected{}, err
	}
	if dec.More() {
		return Expected{}, fmt.Errorf("more than one JSON value")
	}
	return e, nil
}

// Read reads the expected.json at path.
func Read(path string) (Expected, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Expected{}, err
	}
	e, err := Parse(data)
	if err != nil {
		return Expected{}, fmt.Errorf("%s: %w", path, err)
	}
	return e, nil
}

package differential

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/effectivepolicy-dev/effectivepolicy/test/differential/gen"
)

// An Oracle judges our answers with an implementation's own code. The
// implementation runs as a program that reads the objects as one
// multi-document YAML stream on stdin and prints JSON on stdout (Envoy
// Gateway's egctl, or a harness module of its own such as
// test/differential/oracles/kuadrant); the oracle reads that JSON and our
// answers for the same objects into Checks. Adding an implementation is a
// package under test/differential/impl that registers one in init, imported
// by package all.
type Oracle interface {
	// Name is the implementation's folder name under test/upstream.
	Name() string
	// Features are the structures the implementation's program can read.
	Features() gen.Features
	// Command is the program and its arguments.
	Command() ([]string, error)
	// Input is what the program reads, and Ours what our engine reads
	// (with the CRDs and the defaults kube-apiserver would add).
	Input(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error)
	Ours(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error)
	// Compare reads the program's output and our answer into checks.
	Compare(objs []*unstructured.Unstructured, ours *Ours, out []byte) ([]Check, error)
}

var oracles = map[string]Oracle{}

// Register adds an oracle; each oracle's package calls it from init.
func Register(o Oracle) { oracles[o.Name()] = o }

// Oracles lists the registered oracles by name.
func Oracles() []Oracle {
	var out []Oracle
	for _, o := range oracles {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// OracleNamed returns the registered oracle name, or nil.
func OracleNamed(name string) Oracle { return oracles[name] }

// A Check is one thing both sides answer: the effective value of a field
// of a policy kind at a subject (a route rule through a listener, a
// listener, a policy), as the implementation and as we compute it. ""
// means unset.
type Check struct {
	Kind    string // policy kind
	Subject string
	Field   string
	Theirs  string
	Ours    string
	// Target, Path (the context's attachment points) and Policy say what
	// the check is about, for writing a disagreement as a case: Target and
	// Path for an effective value, Policy ("namespace/name") for a policy's
	// outcome.
	Target Node
	Path   []Node
	Policy string
	// At are, for a policy's outcome, the ancestors on which the
	// implementation reports it (its status is per ancestor).
	At []Node
}

// Agree says whether both sides gave the same answer.
func (c Check) Agree() bool { return c.Theirs == c.Ours }

func (c Check) String() string {
	return fmt.Sprintf("%s %s %s: theirs %q, ours %q", c.Kind, c.Subject, c.Field, c.Theirs, c.Ours)
}

// runProgram runs argv with stdin, bounded by timeout.
func runProgram(argv []string, stdin []byte, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", argv[0], err, stderr.String())
	}
	return stdout.Bytes(), nil
}

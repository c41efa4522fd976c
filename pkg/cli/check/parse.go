package check

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Error is a mistake in an expectations file, where it is.
type Error struct {
	File   string
	Line   int
	Reason string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Reason)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason)
}

// IsExpectations reports whether a document of that apiVersion and kind is
// an expectations document (the rest of -f are manifests).
func IsExpectations(apiVersion, kind string) bool {
	return kind == Kind && strings.HasPrefix(apiVersion, "effectivepolicy.dev/")
}

// Parse reads the expectations documents of file's data (a YAML stream;
// documents of other kinds are skipped: they are manifests). Unknown
// fields, values of the wrong type and rules that say nothing are errors,
// reported with their line.
func Parse(file string, data []byte) ([]*Expectations, error) {
	nodes, err := documents(file, data)
	if err != nil {
		return nil, err
	}
	// A second pass decodes the same stream strictly: yaml.v3 checks
	// unknown fields only when decoding from a Decoder, not from a Node.
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var out []*Expectations
	for _, n := range nodes {
		if !n.ours {
			var skip yaml.Node
			if err := dec.Decode(&skip); err != nil {
				return nil, yamlError(file, err)
			}
			continue
		}
		doc := &Expectations{File: file}
		if err := dec.Decode(doc); err != nil {
			return nil, yamlError(file, err)
		}
		if err := validate(doc, n.node); err != nil {
			return nil, err
		}
		out = append(out, doc)
	}
	return out, nil
}

type document struct {
	node *yaml.Node // the document's top mapping
	ours bool
}

// documents splits the stream into its documents and says which are
// expectations.
func documents(file string, data []byte) ([]document, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []document
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, yamlError(file, err)
		}
		top := &n
		if top.Kind == yaml.DocumentNode && len(top.Content) == 1 {
			top = top.Content[0]
		}
		d := document{node: top}
		if top.Kind == yaml.MappingNode {
			kind, apiVersion := scalar(top, "kind"), scalar(top, "apiVersion")
			d.ours = IsExpectations(apiVersion, kind)
			if d.ours && apiVersion != APIVersion {
				return nil, &Error{File: file, Line: keyLine(top, "apiVersion"), Reason: fmt.Sprintf("apiVersion of Expectations is %s, not %q", APIVersion, apiVersion)}
			}
		}
		out = append(out, d)
	}
}

var (
	lineRE    = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	unknownRE = regexp.MustCompile(`^field (\S+) not found in type \S+$`)
	typeRE    = regexp.MustCompile(`^cannot unmarshal (\S+) (.*) into (\S+)$`)
)

// yamlError turns yaml.v3's errors into Errors, one per line it names
// (the first is returned; the others are in its reason).
func yamlError(file string, err error) error {
	var msgs []string
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	var first *Error
	var more []string
	for _, m := range msgs {
		e := &Error{File: file, Reason: m}
		if g := lineRE.FindStringSubmatch(m); g != nil {
			e.Line, _ = strconv.Atoi(g[1]) // the regexp's \d+
			e.Reason = reason(g[2])
		}
		if first == nil {
			first = e
		} else {
			more = append(more, e.Error())
		}
	}
	if len(more) > 0 {
		first.Reason += "; and " + strings.Join(more, "; ")
	}
	return first
}

// reason words yaml.v3's messages as a user reads them, without Go types.
func reason(m string) string {
	if g := unknownRE.FindStringSubmatch(m); g != nil {
		return fmt.Sprintf("unknown field %q", g[1])
	}
	if g := typeRE.FindStringSubmatch(m); g != nil {
		want := g[3]
		switch {
		case strings.HasPrefix(want, "[]"):
			want = "a list"
		case strings.HasPrefix(want, "map[") || strings.Contains(want, "."):
			want = "an object"
		case want == "bool" || want == "*bool":
			want = "true or false"
		default:
			want = "a " + strings.TrimPrefix(want, "*")
		}
		return fmt.Sprintf("%s is not %s", g[2], want)
	}
	return m
}

// scalar is the value of key in mapping n, "" when it is not a scalar.
func scalar(n *yaml.Node, key string) string {
	if v := value(n, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// value is the node of key in mapping n (nil: none).
func value(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// keyLine is the line of key in mapping n, else n's own.
func keyLine(n *yaml.Node, key string) int {
	if n == nil {
		return 0
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i].Line
			}
		}
	}
	return n.Line
}

// item is the i-th item of the sequence at key in mapping n (nil: none).
func item(n *yaml.Node, key string, i int) *yaml.Node {
	if s := value(n, key); s != nil && s.Kind == yaml.SequenceNode && i < len(s.Content) {
		return s.Content[i]
	}
	return nil
}

// Package tree draws the kubectl plugin's human output: nodes of styled
// text, drawn with box-drawing guides, in color only when the caller asks
// for it. It knows nothing of the API: pkg/cli/render builds the nodes.
package tree

import (
	"io"
	"strings"

	"github.com/xlab/treeprint"
	"k8s.io/cli-runtime/pkg/printers"
)

// Style is the role of a piece of text; the printer maps roles to colors,
// so that what is colored how is decided in one place.
type Style int

// The roles.
const (
	Plain Style = iota
	// Heading: what a tree is about (the target, the policy, the request).
	Heading
	// Kind: a policy kind.
	Kind
	// Muted: detail that supports the line (strategies, counts of zero).
	Muted
	// Good, Warn, Bad: outcomes and reasons.
	Good
	Warn
	Bad
	// Source: the policy that set a field.
	Source
	// Added, Removed: what a change adds and takes away (diff).
	Added
	Removed
)

// ansi are the SGR codes of the styles; Plain has none.
var ansi = map[Style]string{
	Heading: "1",
	Kind:    "1;36",
	Muted:   "2",
	Good:    "32",
	Warn:    "33",
	Bad:     "31",
	Source:  "34",
	Added:   "32",
	Removed: "31",
}

// Span is a piece of a line in one style.
type Span struct {
	Text  string
	Style Style
}

// S returns a span of text in style.
func S(style Style, text string) Span { return Span{Text: text, Style: style} }

// P returns a plain span.
func P(text string) Span { return Span{Text: text} }

// Node is one line and the lines below it.
type Node struct {
	Line     []Span
	Children []*Node
}

// New returns a node with the given line.
func New(line ...Span) *Node { return &Node{Line: line} }

// Add appends a child with the given line and returns it.
func (n *Node) Add(line ...Span) *Node {
	c := New(line...)
	n.Children = append(n.Children, c)
	return c
}

// Append appends existing nodes as children (nil ones are skipped).
func (n *Node) Append(children ...*Node) {
	for _, c := range children {
		if c != nil {
			n.Children = append(n.Children, c)
		}
	}
}

// Printer writes trees.
type Printer struct {
	// Color adds ANSI colors. The caller decides (a terminal, --color).
	Color bool
}

// Fprint writes each root and its descendants (drawn by treeprint, as
// kubectl's kustomize output is); roots are separated by an empty line.
// Text from the cluster is escaped: no terminal control sequence gets
// through (a policy's message is anyone's input).
func (p Printer) Fprint(w io.Writer, roots ...*Node) error {
	for i, r := range roots {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		t := treeprint.NewWithRoot(p.text(r.Line))
		p.add(t, r.Children)
		if _, err := w.Write(t.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

func (p Printer) add(t treeprint.Tree, children []*Node) {
	for _, c := range children {
		if len(c.Children) == 0 {
			t.AddNode(p.text(c.Line))
			continue
		}
		p.add(t.AddBranch(p.text(c.Line)), c.Children)
	}
}

// text joins a line's spans, escaped and, with Color, colored.
func (p Printer) text(line []Span) string {
	var b strings.Builder
	for _, s := range line {
		text := printers.EscapeTerminal(s.Text)
		code := ansi[s.Style]
		if !p.Color || code == "" || text == "" {
			b.WriteString(text)
			continue
		}
		// A span that goes on over lines is colored line by line, so that
		// the tree's guides between them stay plain.
		for j, part := range strings.Split(text, "\n") {
			if j > 0 {
				b.WriteString("\n")
			}
			if part != "" {
				b.WriteString("\x1b[" + code + "m" + part + "\x1b[0m")
			}
		}
	}
	return b.String()
}

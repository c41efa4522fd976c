package ui

import "github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/tree"

// TreeNode is a tree of pkg/cli/render as the page draws it: the same
// lines as the terminal, each span with the name of its role.
type TreeNode struct {
	Line     []Span      `json:"line"`
	Children []*TreeNode `json:"children,omitempty"`
}

// Span is a piece of a line; Style names its role (the page's class s-NAME).
type Span struct {
	Text  string `json:"text"`
	Style string `json:"style,omitempty"`
}

var styleNames = map[tree.Style]string{
	tree.Heading: "heading",
	tree.Kind:    "kind",
	tree.Muted:   "muted",
	tree.Good:    "good",
	tree.Warn:    "warn",
	tree.Bad:     "bad",
	tree.Source:  "source",
	tree.Added:   "added",
	tree.Removed: "removed",
}

// Trees converts render's trees for the page.
func Trees(roots ...*tree.Node) []*TreeNode {
	out := make([]*TreeNode, 0, len(roots))
	for _, r := range roots {
		if r != nil {
			out = append(out, convert(r))
		}
	}
	return out
}

func convert(n *tree.Node) *TreeNode {
	t := &TreeNode{Line: make([]Span, 0, len(n.Line))}
	for _, s := range n.Line {
		t.Line = append(t.Line, Span{Text: s.Text, Style: styleNames[s.Style]})
	}
	for _, c := range n.Children {
		t.Children = append(t.Children, convert(c))
	}
	return t
}

package tree

import (
	"bytes"
	"testing"
)

func TestFprint(t *testing.T) {
	root := func() *Node {
		r := New(S(Heading, "HTTPRoute baker/baker"))
		k := r.Add(S(Kind, "RetryPolicy"), P("  Inherited"))
		k.Add(P("attempts: 3"), S(Source, "  ← baker/retry-all"))
		k.Add(P("first line\nsecond line"))
		r.Add(P("evil \x1b[31mred\r"))
		return r
	}
	cases := []struct {
		name  string
		color bool
		roots []*Node
		want  string
	}{
		{
			name:  "guides, continued lines, escaped control characters",
			roots: []*Node{root()},
			want: "HTTPRoute baker/baker\n" +
				"├── RetryPolicy  Inherited\n" +
				"│   ├── attempts: 3  ← baker/retry-all\n" +
				"│   └── first line\n" +
				"│       second line\n" +
				"└── evil ^[[31mred\\r\n",
		},
		{
			name:  "color per span, guides plain",
			color: true,
			roots: []*Node{New(S(Good, "ok"), P(" plain")).withChild(New(S(Bad, "a\nb")))},
			want:  "\x1b[32mok\x1b[0m plain\n└── \x1b[31ma\x1b[0m\n    \x1b[31mb\x1b[0m\n",
		},
		{
			name:  "roots apart",
			roots: []*Node{New(P("one")), New(P("two"))},
			want:  "one\n\ntwo\n",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := (Printer{Color: c.color}).Fprint(&b, c.roots...); err != nil {
				t.Fatal(err)
			}
			if b.String() != c.want {
				t.Errorf("got\n%q\nwant\n%q", b.String(), c.want)
			}
		})
	}
}

func (n *Node) withChild(c *Node) *Node {
	n.Append(nil, c)
	return n
}

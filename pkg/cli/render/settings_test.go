package render

import (
	"bytes"
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/tree"
)

// settingsCases: a merged spec and its fieldSources, and the tree settings draws of them.
var settingsCases = []struct {
	name    string
	spec    string
	sources map[string]string
	want    string
}{
	{
		name:    "leaves with their sources, keys sorted, nested objects opened",
		spec:    `{"retries": 3, "backoff": {"base": "1s", "max": "10s"}, "on": ["5xx", "reset"]}`,
		sources: map[string]string{"/retries": "a/p1", "/backoff/base": "a/p1", "/backoff/max": "b/p2", "/on": "a/p1"},
		want: `x
├── backoff
│   ├── base: 1s  ← a/p1
│   └── max: 10s  ← b/p2
├── on: ["5xx","reset"]  ← a/p1
└── retries: 3  ← a/p1
`,
	},
	{
		name:    "a list merged by keys is opened where fieldSources point into it",
		spec:    `{"limits": [{"name": "a", "rate": 5}, {"name": "b", "rate": 7}]}`,
		sources: map[string]string{"/limits/0": "ns/p1", "/limits/1/rate": "ns/p2", "/limits/1/name": "ns/p2"},
		want: `x
└── limits
    ├── [0]: {"name":"a","rate":5}  ← ns/p1
    └── [1]
        ├── name: b  ← ns/p2
        └── rate: 7  ← ns/p2
`,
	},
	{
		name:    "strings that would read as something else are quoted; an empty object is a leaf",
		spec:    `{"a": "", "b": "true", "c": "42", "d": " x", "e": {}, "f": "a<b&c", "g": 1.50, "h": null}`,
		sources: map[string]string{"/e": "p"},
		want: `x
├── a: ""
├── b: "true"
├── c: "42"
├── d: " x"
├── e: {}  ← p
├── f: a<b&c
├── g: 1.50
└── h: null
`,
	},
	{
		name:    "a kind whose policies all apply: numbered steps in order, each with its policy",
		spec:    `[{"priority": -5, "jsonPatches": [{"op": "add"}]}, {"priority": 10}, "x"]`,
		sources: map[string]string{"/0": "ns/late", "/1": "ns/early", "/2": "ns/odd"},
		want: `x
├── 1. applied 1st  ← ns/late
│   ├── jsonPatches: [{"op":"add"}]
│   └── priority: -5
├── 2. applied 2nd  ← ns/early
│   └── priority: 10
└── 3. applied 3rd  ← ns/odd
    └── spec: x
`,
	},
	{
		name:    "a list whose items fieldSources do not all name is one leaf",
		spec:    `[1, 2]`,
		sources: map[string]string{"": "ns/p"},
		want:    "x\n└── spec: [1,2]  ← ns/p\n",
	},
	{name: "no spec", spec: ``, want: "x\n└── no settings\n"},
	{name: "an empty spec", spec: `{}`, sources: map[string]string{"": "ns/p"}, want: "x\n└── spec: {}  ← ns/p\n"},
	{name: "unreadable", spec: `{`, want: "x\n└── unreadable spec: unexpected EOF\n"},
}

func TestSettings(t *testing.T) {
	for _, c := range settingsCases {
		t.Run(c.name, func(t *testing.T) {
			n := tree.New(tree.P("x"))
			settings(n, []byte(c.spec), c.sources)
			var b bytes.Buffer
			if err := (tree.Printer{}).Fprint(&b, n); err != nil {
				t.Fatal(err)
			}
			if b.String() != c.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), c.want)
			}
		})
	}
}

package yamldocs

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		names   []string
		wantErr string
	}{
		{name: "empty", in: ""},
		{name: "comments only", in: "# nothing\n---\n# still nothing\n"},
		{name: "one", in: "kind: A\nmetadata: {name: a}\n", names: []string{"a"}},
		{name: "leading separator and blanks", in: "---\nkind: A\nmetadata: {name: a}\n---\n\n---\nkind: B\nmetadata: {name: b}\n", names: []string{"a", "b"}},
		{name: "separator with trailing space", in: "kind: A\nmetadata: {name: a}\n--- \nkind: B\nmetadata: {name: b}\n", names: []string{"a", "b"}},
		{name: "dashes inside a block scalar stay", in: "kind: A\nmetadata: {name: a}\ndata:\n  x: |\n    ----\n", names: []string{"a"}},
		{name: "not a mapping", in: "kind: A\n---\n- 1\n- 2\n", wantErr: "document 1"},
		{name: "broken yaml", in: "kind: [\n", wantErr: "document 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Parse([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want error with %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range objs {
				got = append(got, o.GetName())
			}
			if strings.Join(got, ",") != strings.Join(tc.names, ",") {
				t.Errorf("names %v, want %v", got, tc.names)
			}
		})
	}
}

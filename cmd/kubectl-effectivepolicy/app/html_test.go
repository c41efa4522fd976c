package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/effectivepolicy-dev/effectivepolicy/pkg/cli/ui"
)

// TestHTML: --html on each command writes one page with the trees the
// terminal shows, the command line as its title, and nothing to fetch; the
// terminal's output and exit status stay as they were.
func TestHTML(t *testing.T) {
	cases := []struct {
		name      string
		args      []string
		wantErr   bool
		wantTrees []string
		wantGraph bool
	}{
		{name: "describe", args: with(demo, "describe", "httproute/baker", "-n", "baker"), wantTrees: []string{"HTTPRoute baker/baker", "request: 10s"}, wantGraph: true},
		{name: "describe -o yaml", args: with(demo, "describe", "httproute/baker", "-n", "baker", "-o", "yaml"), wantTrees: []string{"HTTPRoute baker/baker"}, wantGraph: true},
		{name: "reach", args: with(demo, "reach", "timeoutpolicy/gateway-timeouts", "-n", "infra"), wantTrees: []string{"infra/gateway-timeouts", "PartiallyEnforced"}},
		{name: "trace", args: with(demo, "trace", "--host", "baker.cupcakes.example"), wantTrees: []string{"HTTPRoute baker/baker"}},
		{name: "diff with changes", args: []string{"diff", "--offline", "../../../hack/demo", "testdata/demo-new"}, wantErr: true, wantTrees: []string{"Modified"}},
		{name: "diff without changes", args: []string{"diff", "--offline", "../../../hack/demo", "../../../hack/demo"}, wantTrees: []string{"No effective policy would change."}},
	}
	data := regexp.MustCompile(`<script type="application/json" id="ep-data">(.*?)</script>`)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "out.html")
			plain, _, plainErr := run(t, "", c.args...)
			out, _, err := run(t, "", append(c.args, "--html", file)...)
			if (err != nil) != c.wantErr || (plainErr != nil) != c.wantErr || out != plain {
				t.Fatalf("with --html: %v, %q; without: %v, %q", err, out, plainErr, plain)
			}
			page, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(page), ` src=`) || strings.Contains(string(page), `<link`) || !strings.Contains(string(page), `default-src 'none'`) {
				t.Errorf("the page loads something from elsewhere, or has no CSP")
			}
			m := data.FindSubmatch(page)
			if m == nil {
				t.Fatalf("no data in the page")
			}
			var r ui.Report
			if err := json.Unmarshal(m[1], &r); err != nil {
				t.Fatal(err)
			}
			trees, _ := json.Marshal(r.Trees)
			for _, w := range c.wantTrees {
				if !strings.Contains(string(trees), w) {
					t.Errorf("no %q in the page's trees: %s", w, trees)
				}
			}
			if !strings.HasPrefix(r.Title, "kubectl effectivepolicy "+c.args[0]) {
				t.Errorf("title %q", r.Title)
			}
			if (len(r.Graph.Nodes) > 0) != c.wantGraph || c.wantGraph && len(r.Targets) == 0 {
				t.Errorf("graph of %d nodes, %d stacks", len(r.Graph.Nodes), len(r.Targets))
			}
		})
	}
}

// TestHTMLUnwritable: a file that cannot be written is an error, named.
func TestHTMLUnwritable(t *testing.T) {
	_, _, err := run(t, "", append(with(demo, "describe", "httproute/baker", "-n", "baker"), "--html", "/nonexistent/dir/x.html")...)
	if err == nil || !strings.Contains(err.Error(), "--html") {
		t.Errorf("error %v", err)
	}
}

package layering

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/effectivepolicy-dev/effectivepolicy/"

// layers are the layers of docs/storage.md, "Layering", by path prefix
// (the longest prefix wins). A package may import packages of lower layers
// only; in the layers listed in peers, packages may also import each other.
var layers = []struct {
	prefix string
	layer  int
}{
	{"internal/", 1},
	{"pkg/apis/", 1},
	{"pkg/generated/", 1},
	{"pkg/encoded", 2},
	{"pkg/compute", 2},
	{"pkg/inputs", 2},
	{"pkg/requestmatch", 2},
	{"pkg/httpgzip", 2},
	{"pkg/cli/tree", 2},
	{"pkg/cli/kinds", 2},
	{"pkg/cli/manifests", 2},
	{"pkg/cli/pagedlist", 2},
	{"pkg/access", 3},
	{"pkg/access/accesstest", 4}, // fixtures for the tests of pkg/access and the REST layer
	{"pkg/reach", 3},
	{"pkg/requesttrace", 3},
	{"pkg/storage/resourceversion", 3},
	{"pkg/cli/render", 3},
	{"pkg/cli/check", 3},
	{"pkg/cli/change", 3}, // manifests as the change a review takes: diff and the ui's Change view
	{"pkg/storage/cache", 4},
	{"pkg/storage/versioned", 4},
	{"pkg/cli/offline", 4},
	{"pkg/cli/ui", 4}, // the page of `kubectl effectivepolicy ui` and --html
	{"pkg/review", 4},
	{"pkg/registry", 5},
	{"pkg/live", 6},
	{"pkg/apiserver", 6},
	{"cmd/", 7},
	{"test/", 8},
}

// forbidden are imports the layers allow but the design does not: the
// kubectl plugin answers offline with the packages the server's REST layer
// calls (pkg/review, pkg/requesttrace, pkg/apis/.../validation), never with
// the REST layer itself, which would link the API server's storage (and
// its dependencies) into the plugin. Checked against every package the
// importer links, directly or not.
var forbidden = []struct{ from, to string }{
	{"cmd/kubectl-effectivepolicy", "pkg/registry"},
	{"pkg/cli/", "pkg/registry"},
}

// peers: the foundation (API types and what is generated from them, small
// helpers) and the binaries' own packages.
var peers = map[int]bool{1: true, 7: true, 8: true}

// rooms orders the engine's own packages inside its layer: a room may
// import rooms of a lower rank only, and like every package of its layer
// nothing else of the layer. A prefix ending in "/" names every package
// below it.
var rooms = []struct {
	prefix string
	rank   int
}{
	{"pkg/compute/merge", 1},
	{"pkg/compute/topology", 1},
	{"pkg/compute/semantics", 2},     // the seam: the Profile interface and its inputs
	{"pkg/compute/semantics/gep", 3}, // the default fold, which other profiles fall back on
	{"pkg/compute/semantics/", 4},    // one folder per implementation
	{"pkg/compute/policies", 5},      // descriptors, the table of profiles, parsing
	{"pkg/compute/attach", 6},        // where policies attach
	{"pkg/compute/fold", 7},          // contexts, folds, outcomes, output objects
	{"pkg/compute", 9},
}

func roomOf(pkg string) (int, bool) {
	best, rank := -1, 0
	for _, r := range rooms {
		match := pkg == r.prefix || (strings.HasSuffix(r.prefix, "/") && strings.HasPrefix(pkg, r.prefix))
		if match && len(r.prefix) > best {
			best, rank = len(r.prefix), r.rank
		}
	}
	return rank, best >= 0
}

// roomBelow reports whether imp is a room of the engine below pkg's.
func roomBelow(pkg, imp string) bool {
	from, ok := roomOf(pkg)
	if !ok {
		return false
	}
	to, ok := roomOf(imp)
	return ok && to < from
}

func hasPrefix(pkg, prefix string) bool {
	return pkg == strings.TrimSuffix(prefix, "/") || strings.HasPrefix(pkg, prefix)
}

func layerOf(pkg string) (int, bool) {
	best, layer := -1, 0
	for _, l := range layers {
		if hasPrefix(pkg, l.prefix) && len(l.prefix) > best {
			best, layer = len(l.prefix), l.layer
		}
	}
	return layer, best >= 0
}

// importError says why pkg may not import imp, both inside the module ("":
// it may). A package of no layer is reported on its own.
func importError(pkg, imp string) string {
	for _, f := range forbidden {
		if hasPrefix(pkg, f.from) && hasPrefix(imp, f.to) {
			return fmt.Sprintf("%s links %s, which %s* may not", pkg, imp, f.from)
		}
	}
	from, ok := layerOf(pkg)
	to, ok2 := layerOf(imp)
	if !ok || !ok2 {
		return ""
	}
	if to > from || (to == from && !peers[from] && !roomBelow(pkg, imp)) {
		return fmt.Sprintf("%s (layer %d) imports %s (layer %d)", pkg, from, imp, to)
	}
	return ""
}

// TestImportRules: the rules TestLayering applies, on imports that must
// stay refused (and some that must stay allowed).
func TestImportRules(t *testing.T) {
	cases := []struct {
		pkg, imp string
		ok       bool
	}{
		{"cmd/kubectl-effectivepolicy/app", "pkg/registry", false},
		{"cmd/kubectl-effectivepolicy", "pkg/registry", false},
		{"pkg/cli/offline", "pkg/registry", false},
		{"pkg/cli/render", "pkg/registry", false},
		{"cmd/kubectl-effectivepolicy/app", "pkg/review", true},
		{"cmd/kubectl-effectivepolicy/app", "pkg/apis/effectivepolicy/validation", true},
		{"cmd/effectivepolicy-apiserver/app", "pkg/registry", true},
		{"pkg/apiserver", "pkg/registry", true},
		{"pkg/registry", "pkg/review", true},
		{"pkg/review", "pkg/registry", false},
		{"pkg/access", "pkg/registry", false},
		{"pkg/storage/versioned", "pkg/registry", false},
		{"pkg/live", "pkg/compute", true},
		{"pkg/compute", "pkg/live", false},
		{"pkg/compute", "pkg/compute/policies", true},
		{"pkg/compute/policies", "pkg/compute/semantics/kuadrant", true},
		{"pkg/compute/semantics/kuadrant", "pkg/compute/semantics/gep", true},
		{"pkg/compute/semantics/kuadrant", "pkg/compute/semantics/envoygateway", false},
		{"pkg/compute/semantics", "pkg/compute/policies", false},
		{"pkg/compute/merge", "pkg/compute", false},
		{"pkg/compute/merge", "pkg/encoded", false},
	}
	for _, tc := range cases {
		if msg := importError(tc.pkg, tc.imp); (msg == "") != tc.ok {
			t.Errorf("%s importing %s: allowed %v, want %v (%s)", tc.pkg, tc.imp, msg == "", tc.ok, msg)
		}
	}
}

// TestLayering lists the module's packages with their non-test imports and
// checks each import against the layers: a package that imports upwards
// ties the lower layer to the higher one (the storage importing the REST
// layer for an interface assertion, say), and a new package must be given
// its place.
func TestLayering(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	cmd := exec.Command(goTool, "list", "-tags", "e2e,long", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}} |{{range .Deps}} {{.}}{{end}}", module+"...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		imports, deps, _ := strings.Cut(line, "|")
		f := strings.Fields(imports)
		pkg := strings.TrimPrefix(f[0], module)
		if _, ok := layerOf(pkg); !ok {
			t.Errorf("%s has no layer: give it one in docs/storage.md and here", pkg)
			continue
		}
		n++
		direct := map[string]bool{}
		for _, imp := range f[1:] {
			direct[imp] = true
			if imp, ok := strings.CutPrefix(imp, module); ok {
				if msg := importError(pkg, imp); msg != "" {
					t.Error(msg)
				}
			}
		}
		// What a package links through others: only the forbidden rules
		// (the layers hold import by import).
		for _, dep := range strings.Fields(deps) {
			if direct[dep] {
				continue
			}
			dep, ok := strings.CutPrefix(dep, module)
			if !ok {
				continue
			}
			for _, r := range forbidden {
				if hasPrefix(pkg, r.from) && hasPrefix(dep, r.to) {
					t.Errorf("%s links %s (through its imports), which %s* may not", pkg, dep, r.from)
				}
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d packages listed", n)
	}
}

package layering

import (
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
	{"pkg/reach", 3},
	{"pkg/requesttrace", 3},
	{"pkg/storage/resourceversion", 3},
	{"pkg/cli/render", 3},
	{"pkg/storage/cache", 4},
	{"pkg/storage/versioned", 4},
	{"pkg/cli/offline", 4},
	{"pkg/registry", 5},
	{"pkg/live", 6},
	{"pkg/apiserver", 6},
	{"cmd/", 7},
	{"test/", 8},
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

func layerOf(pkg string) (int, bool) {
	best, layer := -1, 0
	for _, l := range layers {
		if (pkg == strings.TrimSuffix(l.prefix, "/") || strings.HasPrefix(pkg, l.prefix)) && len(l.prefix) > best {
			best, layer = len(l.prefix), l.layer
		}
	}
	return layer, best >= 0
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
	cmd := exec.Command(goTool, "list", "-tags", "e2e,long", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], module)
		from, ok := layerOf(pkg)
		if !ok {
			t.Errorf("%s has no layer: give it one in docs/storage.md and here", pkg)
			continue
		}
		n++
		for _, imp := range f[1:] {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			imp = strings.TrimPrefix(imp, module)
			to, ok := layerOf(imp)
			if !ok {
				continue // reported as a package of its own
			}
			if to > from || (to == from && !peers[from] && !roomBelow(pkg, imp)) {
				t.Errorf("%s (layer %d) imports %s (layer %d)", pkg, from, imp, to)
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d packages listed", n)
	}
}

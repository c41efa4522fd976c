package shape

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The limits (docs/architecture.md, "Shape"). Lines are counted as a reader
// sees them: comments and blank lines included, a function from its doc
// comment to its closing brace, a package over its non-test files.
const (
	maxFileLines    = 500
	maxFuncLines    = 80
	maxPackageLines = 2500
	maxMethods      = 25
)

// measure is one thing the limits apply to: what it is (e.g. "func
// pkg/x/y.go F"), and its size.
type measure struct {
	what string
	size int
}

func TestShape(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	over, err := overLimits(root)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range over {
		seen[m.what] = true
		allowed, known := exceptions[m.what]
		switch {
		case !known:
			t.Errorf("%s: %d, over the limit (docs/architecture.md, \"Shape\")", m.what, m.size)
		case m.size > allowed:
			t.Errorf("%s: %d, grew past its known %d: split it instead", m.what, m.size, allowed)
		case m.size < allowed:
			t.Errorf("%s: %d, smaller than its known %d: lower the exception", m.what, m.size, allowed)
		}
	}
	for what := range exceptions {
		if !seen[what] {
			t.Errorf("%s: within the limits now (or gone): remove it from exceptions", what)
		}
	}
}

// overLimits measures every hand-written Go file under root and returns what
// is over a limit, sorted.
func overLimits(root string) ([]measure, error) {
	var over []measure
	packages := map[string]int{}
	methods := map[string]int{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		lines := strings.Count(string(src), "\n")
		if lines > maxFileLines {
			over = append(over, measure{"file " + rel, lines})
		}
		test := strings.HasSuffix(path, "_test.go")
		if !test {
			packages[filepath.Dir(rel)] += lines
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if n := funcLines(fset, fn); n > maxFuncLines {
				over = append(over, measure{fmt.Sprintf("func %s %s", rel, funcName(fn)), n})
			}
			if recv := receiver(fn); recv != "" && !test {
				methods[filepath.Dir(rel)+"."+recv]++
			}
		}
		return nil
	})
	for dir, n := range packages {
		if n > maxPackageLines {
			over = append(over, measure{"package " + dir, n})
		}
	}
	for typ, n := range methods {
		if n > maxMethods {
			over = append(over, measure{"type " + typ, n})
		}
	}
	sort.Slice(over, func(i, j int) bool { return over[i].what < over[j].what })
	return over, err
}

func funcLines(fset *token.FileSet, fn *ast.FuncDecl) int {
	start := fn.Pos()
	if fn.Doc != nil {
		start = fn.Doc.Pos()
	}
	return fset.Position(fn.End()).Line - fset.Position(start).Line + 1
}

func funcName(fn *ast.FuncDecl) string {
	if recv := receiver(fn); recv != "" {
		return recv + "." + fn.Name.Name
	}
	return fn.Name.Name
}

// receiver is the name of the type a method belongs to ("" for a function).
func receiver(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return ""
	}
	t := fn.Recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

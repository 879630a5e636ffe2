package verify

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// documentedCodes reads the table of codes in docs/commands/verify.md.
var documentedCodes = sync.OnceValues(func() (map[Code]bool, error) {
	b, err := os.ReadFile("../docs/commands/verify.md")
	if err != nil {
		return nil, err
	}
	_, table, _ := strings.Cut(string(b), "\n## Problem codes\n")
	table, _, _ = strings.Cut(table, "\n## ")
	codes := map[Code]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\|").FindAllStringSubmatch(table, -1) {
		codes[Code(m[1])] = true
	}
	return codes, nil
})

// checkCodes requires every finding to carry a code of the documented
// table: run calls it, so every finding of this package's tests is held to
// it.
func checkCodes(t testing.TB, findings []Finding) {
	t.Helper()
	codes, err := documentedCodes()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		if !codes[f.Code] {
			t.Errorf("finding without a documented code (%q): %s", f.Code, f)
		}
	}
}

// TestCodesDocumented holds the Code constants of the package to the table
// of docs/commands/verify.md, both ways, and requires every code to be
// given through one of them, so that no finding carries a code the table
// does not list.
func TestCodesDocumented(t *testing.T) {
	codes, err := documentedCodes()
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	declared := map[Code]bool{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				if id, ok := n.Type.(*ast.Ident); ok && id.Name == "Code" {
					for _, v := range n.Values {
						s, err := strconv.Unquote(v.(*ast.BasicLit).Value)
						if err != nil {
							t.Fatal(err)
						}
						declared[Code(s)] = true
					}
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "Code" {
					t.Errorf("%s: a Code made by conversion, which the table cannot be held to", fset.Position(n.Pos()))
				}
			}
			return true
		})
	}
	for c := range declared {
		if !codes[c] {
			t.Errorf("code %q is not in the table of docs/commands/verify.md", c)
		}
	}
	for c := range codes {
		if !declared[c] {
			t.Errorf("the table lists %q, which verify never gives", c)
		}
	}
	if len(declared) == 0 {
		t.Fatal("no Code constant found")
	}
}

package rpcerr_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// moduleRoot is the repository's root, from this package's directory.
const moduleRoot = "../.."

// outsideCode are the directories, from the module root, of code written
// as someone outside Portico would write it, so it spells the codes it
// answers: bench-edge's stack (e), assembled from stock libraries.
var outsideCode = []string{"cmd/benchedge/internal/assembled"}

// TestNoReasonSpelledInGo: portico.type.v1.Reason is the only list of
// reasons and problem codes, so no Go source outside gen/ and tests holds
// one as a string literal: code names its constant in package reasons
// (generated from the enum into gen/) or reads it with rpcerr.ReasonName.
// A gRPC code's canonical name is one of them too (the edge's NOT_FOUND);
// CodeName reads those from google/rpc/code.proto.
func TestNoReasonSpelledInGo(t *testing.T) {
	names := reasonNames()
	found := spellings(t, moduleRoot, names)
	for _, f := range found {
		t.Errorf("%s spells reason %s: use its constant in gen/portico/type/v1/reasons", f.pos, f.name)
	}
}

// TestSpellingsFindsALiteral: the scan sees a literal, and only a whole one.
func TestSpellingsFindsALiteral(t *testing.T) {
	found := spellings(t, "testdata/spelling", reasonNames())
	var got []string
	for _, f := range found {
		got = append(got, f.name)
	}
	if strings.Join(got, " ") != "INSUFFICIENT_FUNDS CIRCUIT_OPEN" {
		t.Errorf("spellings(testdata/spelling) = %v, want [INSUFFICIENT_FUNDS CIRCUIT_OPEN]", got)
	}
}

func reasonNames() map[string]bool {
	names := map[string]bool{}
	values := typev1.Reason(0).Descriptor().Values()
	for i := 1; i < values.Len(); i++ {
		names[rpcerr.ReasonName(typev1.Reason(values.Get(i).Number()))] = true
	}
	return names
}

type spelling struct{ pos, name string }

// spellings returns the string literals equal to one of names in the Go
// files under root, skipping gen/, testdata/, outsideCode, other modules
// (examples/shipping is a service team's code, not Portico's), hidden
// directories and _test.go files, in walk order.
func spellings(t *testing.T, root string, names map[string]bool) []spelling {
	t.Helper()
	var out []spelling
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			rel, _ := filepath.Rel(root, path)
			if path != root && (d.Name() == "gen" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") ||
				slices.Contains(outsideCode, filepath.ToSlash(rel)) || isModule(path)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && names[s] {
					out = append(out, spelling{fset.Position(lit.Pos()).String(), s})
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// isModule reports whether dir holds a go.mod: a module of its own.
func isModule(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "go.mod"))
	return err == nil
}

// Package services_test holds the checks every service package must pass.
package services_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoMutableExports: a service package exports no variable but its
// sentinel errors (Err...). Anything callers read, such as an ErrorInfo
// reason, is a constant or unexported, so no importer can change it.
func TestNoMutableExports(t *testing.T) {
	files, err := filepath.Glob("*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	n := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		n++
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				for _, id := range s.(*ast.ValueSpec).Names {
					if id.IsExported() && !strings.HasPrefix(id.Name, "Err") {
						t.Errorf("%s: exported variable %s; make it a constant or unexported", fset.Position(id.Pos()), id.Name)
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no service files found")
	}
}

package gateway

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// pipelineMarkers names, for each step of the package doc's "Pipeline"
// list in its order, the call that performs it in serveHTTP or serveAPI.
var pipelineMarkers = []struct{ step, call string }{
	{"shed", "full"},
	{"snapshot", "acquire"},
	{"trace", "startSpan"},
	{"header size", "headerSize"},
	{"CORS", "handleCORS"},
	{"ops", "serveOps"},
	{"match", "Match"},
	{"body", "readAPIBody"},
	{"authenticate", "authenticate"},
	{"rate limits", "limit"},
	{"unauthorized", "refuseAuth"},
	{"stream ticket", "serveTicket"},
	{"not routed", "notRouted"},
	{"authorize", "Allowed"},
	{"stream", "serveStream"},
	{"caller cap", "holdCaller"},
	{"shed group", "admit"},
	{"prepare", "prepare"},
	{"capture", "startCapture"},
	{"forward", "serve"},
	{"keep copy", "keepCopy"},
}

// TestPipelineDoc: the package doc's pipeline is the steps the code runs,
// in the code's order. A step added to the code or the doc alone, or two
// steps swapped, fails here.
func TestPipelineDoc(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, m := range pipelineMarkers {
		want = append(want, m.step)
	}
	if got := docSteps(string(doc)); !slices.Equal(got, want) {
		t.Fatalf("doc.go's pipeline steps = %q,\nthe markers here = %q: change both together", got, want)
	}
	calls := callOrder(t, map[string]string{"handler.go": "serveHTTP", "api.go": "serveAPI"}, "serveHTTP", "serveAPI")
	last, lastStep := -1, ""
	for _, m := range pipelineMarkers {
		i := slices.Index(calls, m.call)
		switch {
		case i < 0:
			t.Errorf("step %q: no call of %s in serveHTTP or serveAPI", m.step, m.call)
		case i <= last:
			t.Errorf("step %q (%s) runs before %q, but the doc lists it after", m.step, m.call, lastStep)
		default:
			last, lastStep = i, m.step
		}
	}
}

// docSteps returns the step names of the "# Pipeline" list in a package
// doc: each line of its indented block whose name is followed by two
// spaces.
func docSteps(doc string) []string {
	_, sec, _ := strings.Cut(doc, "// # Pipeline\n")
	sec, _, _ = strings.Cut(sec, "\n//\n// Errors")
	step := regexp.MustCompile(`^//\t(\S+(?: \S+)*?)  `)
	var out []string
	for line := range strings.Lines(sec) {
		if m := step.FindStringSubmatch(line); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// callOrder returns the names of the functions and methods called in the
// named functions of the files (file -> function), in source order, the
// functions taken in the order given.
func callOrder(t *testing.T, files map[string]string, order ...string) []string {
	t.Helper()
	bodies := map[string][]string{}
	fset := token.NewFileSet()
	for file, fn := range files {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == fn {
				bodies[fn] = calls(fd.Body)
			}
		}
	}
	var out []string
	for _, fn := range order {
		if bodies[fn] == nil {
			t.Fatalf("no function %s in %v", fn, files)
		}
		out = append(out, bodies[fn]...)
	}
	return out
}

func calls(body ast.Node) []string {
	var out []string
	ast.Inspect(body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			switch f := c.Fun.(type) {
			case *ast.Ident:
				out = append(out, f.Name)
			case *ast.SelectorExpr:
				out = append(out, f.Sel.Name)
			}
		}
		return true
	})
	return out
}

package main

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// layer is one row of the declared layering: the packages under prefix
// (the longest matching prefix wins) sit at level, and may import only
// packages of the module at a lower or the same level, never one whose
// prefix is in apart.
type layer struct {
	prefix string
	level  int
	apart  []string
}

// layers is the module's layering, from the bottom (docs/architecture.md
// draws it): generated code; the leaves every process shares; the client
// chain; the gRPC server builder the services share (it installs the
// server side of interceptors/identity, deadline and faults); the services
// and the edge beside each other, never importing each other; the binary.
// Test support sits where what it serves does. Every package of the module
// must match a row.
var layers = []layer{
	{prefix: "gen/", level: 0},
	{prefix: "internal/", level: 1},
	{prefix: "interceptors", level: 2},
	{prefix: "internal/grpcserver", level: 3},
	{prefix: "internal/grpctest", level: 3},
	{prefix: "internal/protocheck/protochecktest", level: 3},
	{prefix: "gateway", level: 4, apart: []string{"services"}},
	{prefix: "services", level: 4, apart: []string{"gateway"}},
	{prefix: "internal/e2e", level: 5},
	{prefix: "cmd/", level: 5},
	{prefix: "deploy", level: 5},
	{prefix: "docs", level: 5},
	{prefix: "examples/", level: 5},
}

// testExceptions are the imports only a package's tests make across the
// layering, each "pkg imp" with why: they check that two layers agree.
var testExceptions = map[string]string{
	"services/inventory gateway/jsonwire":  "the update mask the edge parses is the one the service accepts",
	"internal/telemetry internal/grpctest": "client spans are checked over a real gRPC connection",
}

// TestImportsPointDown checks every package's imports, its tests' too,
// against layers.
func TestImportsPointDown(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const mod = "github.com/portico-gateway/portico/"
	for _, imp := range moduleImports(t, mod) {
		if msg := checkImport(imp); msg != "" && (!imp.test || testExceptions[imp.from+" "+imp.to] == "") {
			t.Error(msg)
		}
	}
}

// checkImport says what is wrong with imp, or "" when it points down.
func checkImport(imp edge) string {
	from, ok := layerOf(imp.from)
	if !ok {
		return imp.from + " matches no row of layers: add one"
	}
	to, ok := layerOf(imp.to)
	switch {
	case !ok:
		return fmt.Sprintf("%s imports %s, which matches no row of layers", imp.from, imp.to)
	case to.level > from.level:
		return fmt.Sprintf("%s (level %d) imports %s (level %d): imports point down", imp.from, from.level, imp.to, to.level)
	case slices.ContainsFunc(from.apart, func(p string) bool { return strings.HasPrefix(imp.to, p) }):
		return fmt.Sprintf("%s imports %s: %s and %s stay apart", imp.from, imp.to, from.prefix, to.prefix)
	}
	return ""
}

// layerOf returns the row of layers whose prefix is the longest to match
// pkg, a path relative to the module.
func layerOf(pkg string) (layer, bool) {
	var best layer
	found := false
	for _, l := range layers {
		if strings.HasPrefix(pkg, l.prefix) && (!found || len(l.prefix) > len(best.prefix)) {
			best, found = l, true
		}
	}
	return best, found
}

// edge is one import of a module package by another (paths relative to
// the module); test: only the importer's tests make it.
type edge struct {
	from, to string
	test     bool
}

// moduleImports runs go list once and returns every import of a module
// package by another, tests included.
func moduleImports(t *testing.T, mod string) []edge {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}} | {{join .TestImports " "}} {{join .XTestImports " "}}`, "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	var edges []edge
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg, _ := strings.CutPrefix(f[0], mod)
		edges = append(edges, edge{from: pkg, to: pkg}) // every package needs a row
		test := false
		for _, imp := range f[1:] {
			if imp == "|" {
				test = true
			}
			if rel, ok := strings.CutPrefix(imp, mod); ok && rel != pkg {
				edges = append(edges, edge{pkg, rel, test})
			}
		}
	}
	return edges
}

// TestLayerTable checks the table reads as documented: a package finds the
// longest row, and a test of the check itself can fail.
func TestLayerTable(t *testing.T) {
	for _, tc := range []struct{ pkg, prefix string }{
		{"internal/grpcserver", "internal/grpcserver"},
		{"internal/logging", "internal/"},
		{"interceptors/retry", "interceptors"},
		{"gateway/route", "gateway"},
		{"gen/portico/order/v1", "gen/"},
		{"gen/portico/type/v1/reasons", "gen/"},
		{"cmd/protoc-gen-go-reasons", "cmd/"},
	} {
		if l, ok := layerOf(tc.pkg); !ok || l.prefix != tc.prefix {
			t.Errorf("layerOf(%s) = %q, %v; want %q", tc.pkg, l.prefix, ok, tc.prefix)
		}
	}
	if _, ok := layerOf("elsewhere/pkg"); ok {
		t.Error("a package outside every row matched one")
	}
	for _, tc := range []struct {
		imp  edge
		fail bool
	}{
		{edge{"gateway", "interceptors/retry", false}, false},
		{edge{"internal/logging", "interceptors", false}, true},
		{edge{"interceptors/deadline", "internal/grpcserver", false}, true},
		{edge{"gateway", "services/order", false}, true},
		{edge{"services/order", "gateway/problem", false}, true},
		{edge{"elsewhere", "gateway", false}, true},
	} {
		if got := checkImport(tc.imp) != ""; got != tc.fail {
			t.Errorf("checkImport(%v) fails %v, want %v", tc.imp, got, tc.fail)
		}
	}
}

// TestPackageNamesUnique: no two of the module's non-main packages share a
// name, so an import never needs renaming to tell two apart and a name
// says which concept it is (gateway/timeout beside interceptors/deadline,
// gateway/edgemetrics beside interceptors/metrics). Generated packages
// (gen/) follow the proto layout and are left out.
func TestPackageNamesUnique(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	cmd := exec.Command("go", "list", "-f", `{{.Name}} {{.ImportPath}}`, "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	seen := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, path, _ := strings.Cut(line, " ")
		if name == "main" || strings.Contains(path, "/gen/") {
			continue
		}
		if prev, dup := seen[name]; dup {
			t.Errorf("package name %q is used by %s and %s", name, prev, path)
		}
		seen[name] = path
	}
}

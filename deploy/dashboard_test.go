package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// dashboardFile is the Grafana dashboard shipped for Portico.
const dashboardFile = "grafana/portico.json"

// scopeVariables are the dashboard variables every series selector must
// filter on, so one dashboard never mixes environments or processes.
var scopeVariables = []string{"job", "namespace", "instance"}

// dashboard is the part of a Grafana dashboard the checks read.
type dashboard struct {
	Templating struct {
		List []struct {
			Name     string
			Type     string
			AllValue string `json:"allValue"`
		}
	}
	Panels []struct {
		Title   string
		Targets []struct{ Expr string }
	}
}

var (
	// selector finds a series selector: a metric name and its matchers.
	selector = regexp.MustCompile(`\b((?:portico|grpc|go|process)_[a-z0-9_]+)(\{[^}]*\})?`)
	// grouping finds by (...) and without (...), which hold label names.
	grouping = regexp.MustCompile(`\b(?:by|without)\s*\([^)]*\)`)
	// variable finds a $name reference.
	variable = regexp.MustCompile(`\$([a-zA-Z_]\w*)`)
)

// TestDashboardScoped: the dashboard has the job, namespace and instance
// variables (and route and upstream), and every series selector of every
// panel filters on job, namespace and instance, so one dashboard shows one
// environment's processes; every variable a query names is defined.
func TestDashboardScoped(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range checkDashboard(b) {
		t.Error(p)
	}
}

// checkDashboard returns what is wrong with a dashboard's scoping.
func checkDashboard(b []byte) []string {
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		return []string{fmt.Sprintf("%s: %v", dashboardFile, err)}
	}
	var out []string
	defined := map[string]bool{"__rate_interval": true, "__interval": true, "__range": true}
	for _, v := range d.Templating.List {
		defined[v.Name] = true
	}
	for _, name := range append(slices.Clone(scopeVariables), "route", "upstream", "datasource") {
		if !defined[name] {
			out = append(out, fmt.Sprintf("%s has no %q variable", dashboardFile, name))
		}
	}
	n := 0
	for _, p := range d.Panels {
		for _, q := range p.Targets {
			n++
			out = append(out, checkQuery(p.Title, q.Expr, defined)...)
		}
	}
	if n == 0 {
		out = append(out, dashboardFile+" has no query")
	}
	return out
}

// checkQuery reports a selector of expr that misses a scope matcher, and
// a variable that is not defined.
func checkQuery(panel, expr string, defined map[string]bool) []string {
	var out []string
	for _, m := range variable.FindAllStringSubmatch(expr, -1) {
		if !defined[m[1]] {
			out = append(out, fmt.Sprintf("panel %q: query %q names undefined variable $%s", panel, expr, m[1]))
		}
	}
	sels := selector.FindAllStringSubmatch(grouping.ReplaceAllString(expr, ""), -1)
	if len(sels) == 0 {
		out = append(out, fmt.Sprintf("panel %q: query %q selects no series", panel, expr))
	}
	for _, s := range sels {
		for _, v := range scopeVariables {
			if want := v + `=~"$` + v + `"`; !strings.Contains(s[2], want) {
				out = append(out, fmt.Sprintf("panel %q: %s%s lacks %s", panel, s[1], s[2], want))
			}
		}
	}
	return out
}

// TestCheckDashboardCatches: a selector without a scope matcher, an
// undefined variable and a missing variable are each reported.
func TestCheckDashboardCatches(t *testing.T) {
	good, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, old, new, want string }{
		{"selector without instance", `go_goroutines{job=~\"$job\", namespace=~\"$namespace\", instance=~\"$instance\"}`,
			`go_goroutines{job=~\"$job\", namespace=~\"$namespace\"}`, `go_goroutines{job=~"$job", namespace=~"$namespace"} lacks instance=~"$instance"`},
		{"bare selector", `max(portico_order_reconcile_backing_off{job=~\"$job\", namespace=~\"$namespace\", instance=~\"$instance\"})`,
			`max(portico_order_reconcile_backing_off)`, `portico_order_reconcile_backing_off lacks job=~"$job"`},
		{"undefined variable", `instance=~\"$instance\"})`, `instance=~\"$pod\"})`, "undefined variable $pod"},
		{"no namespace variable", `"name": "namespace"`, `"name": "ns"`, `no "namespace" variable`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(string(good), tt.old) {
				t.Fatalf("%s lacks %q; update the case", dashboardFile, tt.old)
			}
			got := strings.Join(checkDashboard([]byte(strings.Replace(string(good), tt.old, tt.new, 1))), "\n")
			if !strings.Contains(got, tt.want) {
				t.Errorf("checkDashboard = %q, want a problem mentioning %q", got, tt.want)
			}
		})
	}
}

// TestDashboardVariablesMatchTheBinary: the variables that pick Portico's
// processes (go_build_info's path, the main module of the binary) match
// the module path itself; a regex that needs a subpackage (portico/.*)
// matched none, and every panel, filtered on them, showed no data.
func TestDashboardVariablesMatchTheBinary(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Templating struct {
			List []struct {
				Name  string
				Query json.RawMessage
			}
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	const module = "github.com/portico-gateway/portico" // go_build_info's path for cmd/portico's binary
	pathRe := regexp.MustCompile(`path=~\\?"([^"\\]+)\\?"`)
	n := 0
	for _, v := range d.Templating.List {
		for _, m := range pathRe.FindAllStringSubmatch(string(v.Query), -1) {
			n++
			if ok, err := regexp.MatchString(`^(?:`+m[1]+`)$`, module); err != nil || !ok {
				t.Errorf("variable %s: path=~%q does not match %s (PromQL regexes match the whole value)", v.Name, m[1], module)
			}
		}
	}
	if n == 0 {
		t.Errorf("no variable selects go_build_info by path")
	}
}

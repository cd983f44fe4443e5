package deploy

import (
	"flag"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/problem"
)

var update = flag.Bool("update", false, "rewrite the generated blocks of deploy/docs/operations.md and deploy/docs/onboarding.md")

const (
	operationsPage = "docs/operations.md"
	onboardingPage = "docs/onboarding.md"
)

// checkBlock compares the block between "<!-- name:begin" and
// "<!-- name:end -->" in the page at path with want; -update rewrites it.
func checkBlock(t *testing.T, path, name, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	begin, end := "<!-- "+name+":begin", "<!-- "+name+":end -->"
	i, j := strings.Index(page, begin), strings.Index(page, end)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the %s ... %s block", path, begin, end)
	}
	i += strings.Index(page[i:], "\n") + 1
	if page[i:j] == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(page[:i]+want+page[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the %s block is stale: run go test ./deploy -run %s -update\nwant:\n%s", path, name, t.Name(), want)
}

// TestConfigReference: every key of config.Config has a doc comment, and
// the operator's page lists every key with its type, default and comment,
// generated from the structs (-update rewrites it). A section another
// change adds shows up here, or the test fails.
func TestConfigReference(t *testing.T) {
	rows, undocumented, err := configReference("..", reflect.TypeFor[config.Config](), reflect.ValueOf(edgeDefaults(t)))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range undocumented {
		t.Errorf("config key %s has no doc comment: say what it does, its default and what zero means", u)
	}
	checkBlock(t, operationsPage, "config-reference", referenceTable(rows))
}

// documentedOnce and undocumented exercise the doc reader in
// TestConfigReferenceCatches.
type testSection struct {
	// Documented is documented. Zero means 3.
	Documented int `yaml:"documented"`
	// First and Second share this comment.
	First  int `yaml:"first"`
	Second int `yaml:"second"`
	Bare   int `yaml:"bare"`
}

type testConfig struct {
	// Section holds the rest.
	Section testSection `yaml:"section"`
	Hidden  int         `yaml:"-"`
}

// TestConfigReferenceCatches: a field without a doc comment is reported;
// one sharing its neighbour's comment by name is not.
func TestConfigReferenceCatches(t *testing.T) {
	rows, undocumented, err := configReference("..", reflect.TypeFor[testConfig](), reflect.Value{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"section.bare (deploy.testSection.Bare)"}; !reflect.DeepEqual(undocumented, want) {
		t.Errorf("undocumented = %q, want %q", undocumented, want)
	}
	if got, want := len(rows), 5; got != want {
		t.Errorf("%d rows, want %d (section and its four keys): %v", got, want, rows)
	}
	if rows[3].key != "section.second" || !strings.Contains(rows[3].doc, "First and Second") {
		t.Errorf("row 3 = %+v, want section.second with First's comment", rows[3])
	}
}

// errorCodesTable is the onboarding page's table of problem codes, from
// gateway/problem's pages: every code the edge can send, its status, and
// what to do about it.
func errorCodesTable() string {
	var b strings.Builder
	b.WriteString("| code | HTTP | Retry-After | what it means and what to do |\n|---|---|---|---|\n")
	for _, p := range problem.Pages() {
		retry := ""
		if p.RetryAfter {
			retry = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %d | %s | %s |\n", p.Code, p.Status, retry, strings.ReplaceAll(p.Doc, "|", `\|`))
	}
	return b.String()
}

// TestOnboardingCodes: the onboarding page's error codes are
// gateway/problem's, each with its status and advice (-update rewrites
// them), so a new code cannot be missing from the page.
func TestOnboardingCodes(t *testing.T) {
	checkBlock(t, onboardingPage, "error-codes", errorCodesTable())
}

// selectorGrammar is how every config field holding route selectors
// describes them, pointing at package gateway/route/selector's doc.
const selectorGrammar = `A selector is "[METHOD ]TARGET" (package gateway/route/selector): TARGET is "*" (every route), a path template ("/api/orders/{id}"), a route group ("/api/orders/**": that template and every one below it), an RPC ("portico.order.v1.OrderService/GetOrder", also with a leading "/" or a "." before the method) or a service ("portico.order.v1.OrderService/*"); METHOD narrows it to that method.`

// TestSelectorFieldsSayOneThing: the four fields that hold route selectors
// describe the grammar in the same words (they once gave three versions,
// the overrides' without "*", "/**" or "Service/*").
func TestSelectorFieldsSayOneThing(t *testing.T) {
	rows, _, err := configReference("..", reflect.TypeFor[config.Config](), reflect.ValueOf(edgeDefaults(t)))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"routes.overrides": true, "limits.groups[].routes": true, "shed.groups[].routes": true, "auth.policy[].allow": true}
	for _, r := range rows {
		if want[r.key] {
			delete(want, r.key)
			if !strings.Contains(r.doc, selectorGrammar) {
				t.Errorf("%s's doc does not give the selector grammar in the shared words:\n%s", r.key, r.doc)
			}
		}
	}
	for k := range want {
		t.Errorf("no reference row for %s", k)
	}
}

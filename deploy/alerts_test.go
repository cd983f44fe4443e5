package deploy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// runbookBase is where every alert's runbook_url points: a section of the
// operations guide, whose anchor is the alert's name in lower case.
const runbookBase = "https://github.com/portico-gateway/portico/blob/main/deploy/docs/operations.md#"

// severities are the values of the severity label Alertmanager routes on.
var severities = []string{"critical", "warning", "info"}

// rule is one alerting rule of a rules file.
type rule struct {
	Alert       string
	Expr        string
	Labels      map[string]string
	Annotations map[string]string
}

// ruleTests is a promtool test file: the rule files it loads and, per
// test, the alerts it evaluates with the alerts it expects.
type ruleTests struct {
	RuleFiles []string `yaml:"rule_files"`
	Tests     []struct {
		AlertRuleTest []struct {
			Alertname string `yaml:"alertname"`
			ExpAlerts []any  `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// readRules returns every alerting rule of a rules file.
func readRules(t *testing.T, path string) []rule {
	t.Helper()
	var f struct{ Groups []struct{ Rules []rule } }
	readYAML(t, path, &f)
	var out []rule
	for _, g := range f.Groups {
		out = append(out, g.Rules...)
	}
	return out
}

// TestEveryRuleTested: every rules file under prometheus/ has a promtool
// test file (NAME_test.yaml) that loads it, in which every alert has a
// case where it fires; every alert has a severity Alertmanager routes on,
// a summary, and a runbook_url whose section exists in the operations
// guide. promtool test rules runs the file when promtool is installed
// (make check-deploy runs it too).
func TestEveryRuleTested(t *testing.T) {
	files, _ := filepath.Glob("prometheus/*.yaml")
	guide, err := os.ReadFile(operationsPage)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.yaml") {
			continue
		}
		n++
		testFile := strings.TrimSuffix(f, ".yaml") + "_test.yaml"
		var tests ruleTests
		readYAML(t, testFile, &tests)
		if !slices.Contains(tests.RuleFiles, filepath.Base(f)) {
			t.Errorf("%s: rule_files %v does not load %s", testFile, tests.RuleFiles, filepath.Base(f))
		}
		for _, p := range checkRules(f, readRules(t, f), tests, string(guide)) {
			t.Error(p)
		}
		promtoolTest(t, testFile)
	}
	if n == 0 {
		t.Fatal("no rules file under prometheus/")
	}
}

// checkRules returns what is wrong with a rules file's alerts: one
// without a firing test case, a severity Alertmanager does not route on,
// a summary, or a runbook section in the guide.
func checkRules(file string, rules []rule, tests ruleTests, guide string) []string {
	fires := map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			fires[a.Alertname] = fires[a.Alertname] || len(a.ExpAlerts) > 0
		}
	}
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	for _, r := range rules {
		if r.Alert == "" {
			continue // a recording rule
		}
		if !fires[r.Alert] {
			add("%s: alert %s has no promtool test case in which it fires", file, r.Alert)
		}
		if !slices.Contains(severities, r.Labels["severity"]) {
			add("%s: alert %s has severity %q, want one of %v", file, r.Alert, r.Labels["severity"], severities)
		}
		if r.Annotations["summary"] == "" {
			add("%s: alert %s has no summary", file, r.Alert)
		}
		if want := runbookBase + strings.ToLower(r.Alert); r.Annotations["runbook_url"] != want {
			add("%s: alert %s has runbook_url %q, want %q", file, r.Alert, r.Annotations["runbook_url"], want)
		}
		if !hasHeading(guide, r.Alert) {
			add("%s has no section \"### %s\" for alert %s's runbook", operationsPage, r.Alert, r.Alert)
		}
	}
	return out
}

// hasHeading reports a "### name" heading in a Markdown page.
func hasHeading(page, name string) bool {
	return regexp.MustCompile(`(?m)^### ` + regexp.QuoteMeta(name) + `\s*$`).MatchString(page)
}

// promtoolTest runs promtool test rules on file, or logs that it is
// skipped when promtool is not installed (make promtool installs it).
func promtoolTest(t *testing.T, file string) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Logf("promtool not installed (make promtool): skipping promtool test rules %s", file)
		return
	}
	if out, err := exec.Command(path, "test", "rules", file).CombinedOutput(); err != nil {
		t.Errorf("promtool test rules %s: %v\n%s", file, err, out)
	}
}

// TestCheckRulesCatches: checkRules reports an alert without a firing
// case, without a known severity, without a summary and with a runbook
// that points nowhere.
func TestCheckRulesCatches(t *testing.T) {
	var tests ruleTests
	if err := yaml.Unmarshal([]byte(`
tests:
  - alert_rule_test:
      - {alertname: Tested, exp_alerts: [{exp_labels: {}}]}
      - {alertname: OnlyQuiet, exp_alerts: []}
`), &tests); err != nil {
		t.Fatal(err)
	}
	good := rule{Alert: "Tested", Labels: map[string]string{"severity": "critical"},
		Annotations: map[string]string{"summary": "s", "runbook_url": runbookBase + "tested"}}
	quiet := good
	quiet.Alert = "OnlyQuiet"
	quiet.Annotations = map[string]string{"summary": "s", "runbook_url": runbookBase + "onlyquiet"}
	bad := rule{Alert: "Untested", Labels: map[string]string{"severity": "page"}, Annotations: map[string]string{}}
	guide := "### Tested\n\n### OnlyQuiet\n"
	cases := []struct {
		name  string
		rules []rule
		want  int
	}{
		{"tested and documented", []rule{good}, 0},
		{"never fires in a test", []rule{quiet}, 1},
		{"everything missing", []rule{bad}, 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := checkRules("rules.yaml", tc.rules, tests, guide); len(got) != tc.want {
				t.Errorf("checkRules = %q, want %d problems", got, tc.want)
			}
		})
	}
}

package auth

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// renderRules writes rules as the auth.policy section of a config file.
func renderRules(rules []Rule) string {
	var b strings.Builder
	b.WriteString("auth:\n  policy:\n")
	for _, r := range rules {
		fmt.Fprintf(&b, "    - roles: [%s]\n      allow:\n", strings.Join(r.Roles, ", "))
		for _, a := range r.Allow {
			fmt.Fprintf(&b, "        - %q\n", a)
		}
	}
	return b.String()
}

// docBlock returns the yaml block after marker in the markdown file.
func docBlock(t *testing.T, file, marker string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), marker)
	if !ok {
		t.Fatalf("%s has no %q", file, marker)
	}
	_, after, ok = strings.Cut(after, "```yaml\n")
	block, _, ok2 := strings.Cut(after, "```")
	if !ok || !ok2 {
		t.Fatalf("%s has no yaml block after %q", file, marker)
	}
	return block
}

// TestDefaultRulesDoc: docs/security.md shows the built-in policy as the
// auth.policy a config would write to get exactly DefaultRules, and that
// YAML reads back as DefaultRules.
func TestDefaultRulesDoc(t *testing.T) {
	want := renderRules(DefaultRules())
	got := docBlock(t, "../../docs/security.md", "<!-- the built-in policy: TestDefaultRulesDoc -->")
	if got != want {
		t.Fatalf("docs/security.md shows the built-in policy as\n%s\nit is\n%s", got, want)
	}
	var doc struct {
		Auth struct {
			Policy []struct {
				Roles []string `yaml:"roles"`
				Allow []string `yaml:"allow"`
			} `yaml:"policy"`
		} `yaml:"auth"`
	}
	if err := yaml.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatal(err)
	}
	rules := DefaultRules()
	if len(doc.Auth.Policy) != len(rules) {
		t.Fatalf("the block has %d rules, want %d", len(doc.Auth.Policy), len(rules))
	}
	for i, r := range doc.Auth.Policy {
		if strings.Join(r.Roles, ",") != strings.Join(rules[i].Roles, ",") || strings.Join(r.Allow, "\n") != strings.Join(rules[i].Allow, "\n") {
			t.Errorf("rule %d reads back as %v %v, want %v %v", i, r.Roles, r.Allow, rules[i].Roles, rules[i].Allow)
		}
	}
}

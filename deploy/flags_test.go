package deploy

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// assetCommands returns every portico command line in the deploy assets:
// compose's commands and every container's args under k8s/, each as
// "file: argv".
func assetCommands(t *testing.T) map[string][][]string {
	t.Helper()
	out := map[string][][]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		dec := yaml.NewDecoder(f)
		for {
			var doc any
			if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
				return nil
			} else if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			collectArgs(doc, func(argv []string) { out[path] = append(out[path], argv) })
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// collectArgs calls found with every "command" or "args" list of strings.
func collectArgs(node any, found func([]string)) {
	switch n := node.(type) {
	case map[string]any:
		for k, v := range n {
			if list, ok := v.([]any); ok && (k == "command" || k == "args") {
				argv := make([]string, 0, len(list))
				for _, a := range list {
					argv = append(argv, fmt.Sprint(a))
				}
				found(argv)
				continue
			}
			collectArgs(v, found)
		}
	case []any:
		for _, v := range n {
			collectArgs(v, found)
		}
	}
}

// checkAssetFlags runs `portico help SUB` for each command line in the
// assets and reports every subcommand or --flag the binary lacks.
func checkAssetFlags(t *testing.T, bin string) {
	help := func(sub string) (string, error) {
		out, err := exec.Command(bin, "help", sub).CombinedOutput()
		return string(out), err
	}
	for _, p := range missingFlags(assetCommands(t), help) {
		t.Error(p)
	}
}

// missingFlags reports each command line's subcommand that help refuses
// and each --flag its help does not list.
func missingFlags(cmds map[string][][]string, help func(sub string) (string, error)) []string {
	var bad []string
	seen := map[string]string{}
	for path, lines := range cmds {
		for _, argv := range lines {
			sub := argv[0]
			if _, ok := seen[sub]; !ok {
				text, err := help(sub)
				if err != nil {
					bad = append(bad, fmt.Sprintf("%s: portico help %s: %v", path, sub, err))
				}
				seen[sub] = text
			}
			for _, a := range argv[1:] {
				name, _, _ := strings.Cut(a, "=")
				if strings.HasPrefix(name, "--") && !strings.Contains(seen[sub], "\n  "+name+" ") && !strings.Contains(seen[sub], "\n  "+name+"\n") {
					bad = append(bad, fmt.Sprintf("%s: portico %s has no flag %s", path, sub, name))
				}
			}
		}
	}
	if len(seen) < 4 {
		bad = append(bad, fmt.Sprintf("found command lines for %d subcommands in the assets, want gateway, inventory, payment and order", len(seen)))
	}
	return bad
}

// TestAssetCommands: compose and the manifests run all four subcommands.
func TestAssetCommands(t *testing.T) {
	subs := map[string]bool{}
	for _, lines := range assetCommands(t) {
		for _, argv := range lines {
			subs[argv[0]] = true
		}
	}
	for _, want := range []string{"gateway", "inventory", "payment", "order"} {
		if !subs[want] {
			t.Errorf("no asset runs portico %s (found %v)", want, subs)
		}
	}
}

// TestMissingFlagsCatches: a misspelt flag or an unknown subcommand is
// reported.
func TestMissingFlagsCatches(t *testing.T) {
	help := func(sub string) (string, error) {
		if sub == "nope" {
			return "", errors.New("exit status 2")
		}
		return "usage: portico " + sub + "\n\nflags:\n  --db PATH\n      x\n  --verbose\n      y\n", nil
	}
	four := [][]string{{"gateway"}, {"inventory"}, {"payment"}, {"order", "--db", "x", "--verbose"}}
	tests := []struct {
		name string
		add  []string
		want string
	}{
		{"all known", nil, ""},
		{"misspelt flag", []string{"order", "--inventroy", "x"}, "has no flag --inventroy"},
		{"flag=value", []string{"order", "--dbx=1"}, "has no flag --dbx"},
		{"unknown subcommand", []string{"nope"}, "portico help nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := four
			if tt.add != nil {
				lines = append(slices.Clone(four), tt.add)
			}
			got := strings.Join(missingFlags(map[string][][]string{"f.yaml": lines}, help), "\n")
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Errorf("missingFlags(+%q) = %q, want %q", tt.add, got, tt.want)
			}
		})
	}
}

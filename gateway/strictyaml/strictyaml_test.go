package strictyaml

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

type inner struct {
	Name    string        `yaml:"name"`
	Timeout time.Duration `yaml:"timeout,omitempty"`
	Count   int           `yaml:"count,omitempty"`
	Raw     yaml.Node     `yaml:"raw,omitempty"`
}

type doc struct {
	Items  []inner          `yaml:"items"`
	ByName map[string]inner `yaml:"by_name"`
	Ptr    *inner           `yaml:"ptr"`
	Flag   bool             `yaml:"flag"`
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // substrings of the error; nil means success
	}{
		{"valid", "items: [{name: a, timeout: 1s, raw: {anything: [1, 2]}}]\nby_name: {x: {name: b}}\nptr: {name: c}\nflag: true", nil},
		{"empty", "", nil},
		{"comments only", "# nothing\n", nil},
		{"null section", "items: ~\nptr:", nil},
		{"alias", "a: &x {name: a}\n", []string{"a: unknown field"}},
		{"alias to valid", "items: [&x {name: a}, *x]", nil},
		{"unknown field", "items: [{nam: a}]", []string{"items[0].nam: unknown field (line 1); did you mean name?"}},
		{"unknown field, nothing close", "items: [{colour: a}]", []string{"items[0].colour: unknown field (line 1)"}},
		{"unknown in map value", "by_name: {x: {nme: b}}", []string{`by_name["x"].nme: unknown field`}},
		{"repeated key", "flag: true\nflag: false", []string{"flag: repeated key (line 2)"}},
		{"duration without unit", "items: [{name: a, timeout: 5}]", []string{"items[0].timeout: want a duration with a unit"}},
		{"text for int", "ptr: {count: many}", []string{`ptr.count: want an integer, got "many"`}},
		{"bool", "flag: maybe", []string{"flag: want true or false"}},
		{"list for struct", "ptr: [1]", []string{"ptr: want a mapping of fields"}},
		{"struct for list", "items: {name: a}", []string{"items: want a list"}},
		{"mapping for scalar", "items: [{name: {a: b}}]", []string{"items[0].name: want a string"}},
		{"several errors", "items: [{nam: a, timeout: x}]\nflg: 1", []string{"items[0].nam", "items[0].timeout", "flg: unknown field"}},
		{"two documents", "flag: true\n---\nflag: false", []string{"more than one YAML document"}},
		{"malformed", "items: [", []string{"malformed YAML"}},
		{"document not a mapping", "- a", []string{"(document): want a mapping of fields"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d doc
			err := Decode([]byte(tt.in), &d)
			if tt.want == nil {
				if err != nil {
					t.Errorf("Decode(%q) = %v, want nil", tt.in, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Decode(%q) = nil, want %v", tt.in, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Decode(%q) = %q, want it to contain %q", tt.in, err, w)
				}
			}
		})
	}
}

func TestDecodeValues(t *testing.T) {
	var d doc
	if err := Decode([]byte("items: [{name: a, timeout: 1m30s, raw: [x]}]\nby_name: {k: {count: 3}}"), &d); err != nil {
		t.Fatal(err)
	}
	if d.Items[0].Timeout != 90*time.Second || d.ByName["k"].Count != 3 || d.Items[0].Raw.Kind != yaml.SequenceNode {
		t.Errorf("decoded %+v", d)
	}
}

// TestDecodeAliasBomb: a document of a few kilobytes whose aliases nest
// (300 aliases to one list of 1,000 wrong values) expands to 300,000 nodes
// and as many errors; Decode refuses it after a bounded walk, with one
// short error, instead of building every error.
func TestDecodeAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("rows:\n  - &r [" + strings.TrimSuffix(strings.Repeat("x, ", 1000), ", ") + "]\n")
	for range 300 {
		b.WriteString("  - *r\n")
	}
	var d struct {
		Rows [][]int `yaml:"rows"`
	}
	err := Decode([]byte(b.String()), &d)
	if err == nil || !strings.Contains(err.Error(), "excessive aliasing") {
		t.Fatalf("Decode(alias bomb) = %.200v, want excessive aliasing", err)
	}
	if n := len(err.Error()); n > 1000 {
		t.Errorf("Decode(alias bomb) error is %d bytes, want one short error", n)
	}
}

// TestMaintainedYAML: no Go file of the module imports go.yaml.in/yaml/v3,
// archived upstream; its maintained drop-in go.yaml.in/yaml/v3 is the one
// YAML library (issue 27).
func TestMaintainedYAML(t *testing.T) {
	archived := `"gopkg.in/` + `yaml.v3"` // split, so this file does not match itself
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(archived)) {
			t.Errorf("%s imports %s: use go.yaml.in/yaml/v3", path, archived)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

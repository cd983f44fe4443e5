package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// shBlocks returns the README's ```sh blocks.
func shBlocks(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	parts := strings.Split(string(b), "```sh\n")
	for _, p := range parts[1:] {
		block, _, _ := strings.Cut(p, "```")
		out = append(out, block)
	}
	return out
}

// TestREADMERunsAsPasted: no README command holds a placeholder to replace
// by hand (ord-XXXX), and no URL hard-codes a port, so every line runs as
// pasted against make run BASE_PORT=N once B is set (internal/e2e
// TestREADMETryIt runs the block for real).
func TestREADMERunsAsPasted(t *testing.T) {
	placeholder := regexp.MustCompile(`\b[a-z]+-X{3,}\b|X{4,}|Y{4,}`)
	fixedPort := regexp.MustCompile(`(127\.0\.0\.1|localhost):\d+`)
	for i, block := range shBlocks(t) {
		for n, line := range strings.Split(block, "\n") {
			if m := placeholder.FindString(line); m != "" {
				t.Errorf("sh block %d line %d: placeholder %q: capture the id in a variable instead\n%s", i+1, n+1, m, line)
			}
			if m := fixedPort.FindString(line); m != "" {
				t.Errorf("sh block %d line %d: %q hard-codes a port: derive it from B (the base port)\n%s", i+1, n+1, m, line)
			}
		}
	}
}

// TestMakeRunBasePort: make run BASE_PORT=N runs portico dev --base-port N,
// and without it plain portico dev.
func TestMakeRunBasePort(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not found")
	}
	for _, tt := range []struct{ arg, want string }{
		{"BASE_PORT=44100", "exec bin/portico dev --base-port 44100"},
		{"BASE_PORT=", "exec bin/portico dev"},
	} {
		cmd := exec.Command("make", "-n", "-s", "run", tt.arg)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("make -n run %s: %v", tt.arg, err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if got := strings.TrimSpace(lines[len(lines)-1]); got != tt.want {
			t.Errorf("make -n run %s ends with %q, want %q", tt.arg, got, tt.want)
		}
	}
}

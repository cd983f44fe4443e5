package e2e

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestExampleConfigChecks: the configuration reference passes check-config
// as shipped, with no environment variables and no other file next to it.
func TestExampleConfigChecks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	_, file, _, _ := runtime.Caller(0)
	example, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", "..", "deploy", "portico.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "check-config", example)
	cmd.Env = []string{}
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasSuffix(string(out), ": ok\n") {
		t.Errorf("portico check-config %s = %v\n%s", example, err, out)
	}
}

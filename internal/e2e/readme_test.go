package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/portico-gateway/portico/internal/testproc"
)

// tryIt returns the README's "Try it" shell block.
func tryIt(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "## Try it")
	if !ok {
		t.Fatal(`README.md lacks "## Try it"`)
	}
	_, block, ok := strings.Cut(after, "```sh\n")
	if !ok {
		t.Fatal("README.md's Try it has no sh block")
	}
	block, _, _ = strings.Cut(block, "```")
	return block
}

// TestREADMETryIt runs the README's "Try it" block as pasted, with only its
// base port changed, against a real portico dev on that base: every curl
// must succeed (--fail-with-body: no 4xx or 5xx), and the ids it captures
// are set, so no line needs a placeholder replaced by hand.
func TestREADMETryIt(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found", tool)
		}
	}
	block := tryIt(t)
	if !strings.Contains(block, "\nB=43100 ") && !strings.HasPrefix(block, "B=43100 ") {
		t.Fatalf("the Try it block does not start from B=43100 (the base port every URL derives from):\n%s", block)
	}
	base := testproc.FreePortRange(t, 10)
	dir := testproc.TempDir(t)
	dev := testproc.Start(t, bin, "dev", "dev", "--base-port", itoa(base), "--data", dir)
	// /health, not /healthz/ready: the block's first line wants every
	// upstream UP, and the edge is ready before a slow child (a SQLite
	// migration on a busy machine) serves.
	testproc.WaitHTTP(t, dev, "http://"+testproc.Addr(base)+"/health")
	script := "set -e\ncurl() { command curl --fail-with-body \"$@\"; }\n" +
		strings.Replace(block, "B=43100 ", "B="+itoa(base)+" ", 1) +
		"\necho \"ids: ORDER=$ORDER RES=$RES RES2=$RES2 PAY=$PAY\"\n"
	cmd := exec.CommandContext(t.Context(), "bash", "-c", script)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the Try it block failed: %v\n%s", err, out)
	}
	_, ids, _ := strings.Cut(string(out), "ids: ")
	for _, f := range strings.Fields(ids) {
		if strings.HasSuffix(f, "=") {
			t.Errorf("%s is empty after the block: its capture found no id\n%s", f, out)
		}
	}
}

package gateway

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

var traceIDField = regexp.MustCompile(`"traceId":"[^"]*"`)

// golden compares got with testdata/<name>.golden, masking the trace id;
// -update rewrites the file.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	got = traceIDField.ReplaceAll(got, []byte(`"traceId":"TRACE"`))
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from %s:\n got: %s\nwant: %s", name, path, got, want)
	}
}
